// `kubeward <mode> --check-config` as a real process: it reads the config and every file it names
// (CA bundles, client pairs, tokens, kubeconfigs) and exits 0 or 2, binding no port and writing no
// state; and the agent checks all its sections before its first listener or state file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestCa, type CertPair, type TestCa } from '../testkit/certs.ts';
import { runKubeward } from '../testkit/kubeward-process.ts';
import { agentYaml, assertRefused, kubeconfig, watchSection } from './check-config.test-helpers.ts';

let ca: TestCa;
let client: CertPair;
let dir: string;
/** A port this test holds: a mode that tried to bind it would fail with EADDRINUSE and exit 2. */
let held: Server;
let heldPort: number;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kw-check-config-'));
  await mkdir(join(dir, 'ca'));
  ca = await createTestCa('kw-check-ca', join(dir, 'ca'));
  client = await ca.issueClient('operator', 'kubeward-operator');
  held = createServer();
  await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
  heldPort = (held.address() as { port: number }).port;
});
after(async () => {
  await new Promise<void>((resolve) => (held ? held.close(() => resolve()) : resolve()));
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

test('a usable config: every mode says so and exits 0 with its listen and admin addresses on a port held by another socket', async () => {
  const stateDir = join(dir, 'state-ok');
  const kc = await file('ok.kubeconfig', kubeconfig({ caFile: ca.certFile, certFile: client.certFile, keyFile: client.keyFile }));
  const busy = `127.0.0.1:${heldPort}`;
  const cases: Array<[string, string[]]> = [
    ['proxy', ['--listen', busy, '--upstream', '127.0.0.1:1', '--ca-file', ca.certFile, '--admin-address', busy]],
    ['watch', ['--vip', '10.0.0.1', '--health-url', 'https://127.0.0.1:1/readyz', '--ca-file', ca.certFile, '--state-dir', stateDir, '--admin-address', busy]],
    ['routes', ['--provider', 'azure', '--state-dir', stateDir, '--admin-address', busy]],
    ['operator', ['--kubeconfig', kc, '--admin-address', busy]],
  ];
  for (const [mode, args] of cases) {
    const r = await runKubeward([mode, ...args, '--check-config']);
    assert.equal(r.code, 0, `${mode}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^kubeward ${mode}: config ok`), mode);
    assert.equal(r.stderr, '', mode);
  }
  // Neither watch nor routes created the state directory they would write.
  assert.equal(existsSync(stateDir), false);
});

test('the agent checks every section and its files, and a usable config leaves its state directory untouched', async () => {
  const stateDir = join(dir, 'agent-state');
  await mkdir(stateDir);
  const config = await file(
    'agent-ok.yaml',
    agentYaml({
      adminAddress: `127.0.0.1:${heldPort}`,
      proxy: { listen: `["127.0.0.1:${heldPort}"]`, upstream: '["127.0.0.1:1"]', caFile: ca.certFile },
      watch: watchSection(ca.certFile, stateDir),
      routes: { provider: 'azure', stateDir },
    }),
  );
  const r = await runKubeward(['agent', '--config', config, '--check-config']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^kubeward agent: config ok \(--config /);
  assert.deepEqual(await readdir(stateDir), []);
});

test('unusable files: exit 2 with one line naming the key and the file, for every mode', async () => {
  const notPem = await file('not-a-ca.pem', 'hello\n');
  const missing = join(dir, 'missing.crt');
  const badKc = await file('bad.kubeconfig', kubeconfig({ caFile: ca.certFile, certFile: missing, keyFile: client.keyFile }));
  const token = await file('two-lines.token', 'abc\ndef\n');
  const agentTypo = await file('agent-typo.yaml', `proxy:\n  upstream: ["127.0.0.1:1"]\n  caFile: ${notPem}\n`);
  const cases: Array<[string, string[], RegExp]> = [
    ['proxy', ['--upstream', '127.0.0.1:1', '--ca-file', missing], /--ca-file .*missing\.crt: cannot read/],
    ['proxy', ['--upstream', '127.0.0.1:1', '--health-check', 'tcp', '--watch-config'], /--watch-config needs --config FILE/],
    ['proxy', ['--upstream', '127.0.0.1:1', '--ca-file', ca.certFile, '--token-file', token], /--token-file .*two-lines\.token: the token holds 2 lines/],
    ['watch', ['--vip', '10.0.0.1', '--ca-file', notPem], /--ca-file .*not-a-ca\.pem: holds no certificate/],
    [
      'watch',
      ['--vip', '10.0.0.1', '--ca-file', ca.certFile, '--client-cert', client.certFile, '--client-key', ca.certFile],
      /--client-key .*: holds no PEM private key/,
    ],
    [
      'proxy',
      ['--upstream', '127.0.0.1:1', '--health-check', 'tcp', '--discovery', 'kubernetes', '--kubeconfig', badKc],
      /kubeconfig .*bad\.kubeconfig: client-certificate .*missing\.crt: cannot read/,
    ],
    ['operator', ['--kubeconfig', badKc], /--kubeconfig .*bad\.kubeconfig: client-certificate .*missing\.crt: cannot read/],
    ['operator', ['--kubeconfig', missing], /--kubeconfig .*missing\.crt: no such file/],
    ['agent', ['--config', agentTypo], /--ca-file .*not-a-ca\.pem: holds no certificate/],
  ];
  for (const [mode, args, expected] of cases) {
    assertRefused(await runKubeward([mode, ...args, '--check-config']), mode, expected);
  }
});

test('the agent refuses a typo in its last section before the proxy binds or the watcher writes: one line, no state file', async () => {
  const stateDir = join(dir, 'agent-typo-state');
  const config = await file(
    'agent-routes-typo.yaml',
    agentYaml({
      adminAddress: '127.0.0.1:0',
      proxy: { listen: '["127.0.0.1:0"]', upstream: '["127.0.0.1:1"]', healthCheck: 'tcp' },
      watch: watchSection(ca.certFile, stateDir),
      routes: { provider: 'azure', resynk: '30s' },
    }),
  );
  const r = await runKubeward(['agent', '--config', config]);
  // One plain line and no log line: no listener opened, no shutdown to run.
  assertRefused(r, 'agent', /unknown key "routes\.resynk"/);
  assert.equal(existsSync(stateDir), false, 'the watcher must not have created or written its state directory');
});

test('a bad watch section is refused before the proxy of the same agent opens its listener', async () => {
  const config = await file(
    'agent-watch-bad.yaml',
    agentYaml({
      proxy: { listen: `["127.0.0.1:${heldPort}"]`, upstream: '["127.0.0.1:1"]', healthCheck: 'tcp' },
      watch: watchSection(join(dir, 'nowhere.crt')),
    }),
  );
  // Had the proxy bound first, its listen address (held here) would have been the error.
  assertRefused(await runKubeward(['agent', '--config', config, '--admin-address', 'off']), 'agent', /--ca-file .*nowhere\.crt: cannot read/);
});
