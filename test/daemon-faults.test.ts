// Faults inside a running daemon, with real processes: an uncaught exception or unhandled
// rejection ends the process through the ordered shutdown (watch publishes .down) with exit 1; a
// local probe fault keeps watch's verdict and says so; a lock file named like an option is a file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestCa, type TestCa, type CertPair } from '../testkit/certs.ts';
import { ApiserverStandin } from '../testkit/apiserver-standin.ts';
import { KubewardProcess } from '../testkit/kubeward-process.ts';
import { waitFor } from '../testkit/wait-for.ts';
import { startUpstreams } from './proxy/proxy-fixtures.ts';
import { adminTokenFixture } from '../testkit/admin-token.ts';

/** /status needs the admin token. */
const ADMIN_TOKEN = adminTokenFixture();

let ca: TestCa;
let serverCert: CertPair;
let dir: string;
let hook: string;
const procs: KubewardProcess[] = [];
const standins: ApiserverStandin[] = [];

// Loaded with --import into the child: throws (or rejects) once the trigger file appears.
const HOOK = `
import { existsSync } from 'node:fs';
const timer = setInterval(() => {
  if (!existsSync(process.env.KW_TEST_TRIGGER)) return;
  clearInterval(timer);
  if (process.env.KW_TEST_KIND === 'rejection') void Promise.reject(new Error('injected rejection'));
  else throw new Error('injected exception');
}, 50);
timer.unref();
`;

before(async () => {
  ca = await createTestCa();
  serverCert = await ca.issueServer('apiserver', ['IP:127.0.0.1']);
  dir = await mkdtemp(join(tmpdir(), 'kw-daemon-faults-'));
  hook = join(dir, 'crash-hook.mjs');
  await writeFile(hook, HOOK);
});
after(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await Promise.all(standins.map((s) => s.close()));
  await rm(dir, { recursive: true, force: true });
  await ca.close();
});

async function standin(token?: string): Promise<ApiserverStandin> {
  const s = new ApiserverStandin({ cert: serverCert.cert, key: serverCert.key, token });
  await s.open();
  standins.push(s);
  return s;
}

function spawn(args: string[], opts: { crash?: { trigger: string; kind: 'exception' | 'rejection' }; cwd?: string } = {}): KubewardProcess {
  const env = opts.crash ? { ...process.env, KW_TEST_TRIGGER: opts.crash.trigger, KW_TEST_KIND: opts.crash.kind } : undefined;
  const p = new KubewardProcess(args, { env, cwd: opts.cwd, nodeArgs: opts.crash ? ['--import', hook] : [] });
  procs.push(p);
  return p;
}

const watchArgs = (s: ApiserverStandin, stateDir: string, extra: string[] = []) => [
  'watch',
  '--health-url',
  `https://127.0.0.1:${s.port}/readyz`,
  '--ca-file',
  ca.certFile,
  '--state-dir',
  stateDir,
  '--interval',
  '100ms',
  '--timeout',
  '500ms',
  '--heartbeat',
  '300ms',
  '--admin-address',
  'off',
  ...extra,
];

test('an uncaught exception in watch publishes .down on the way out and exits 1', async () => {
  const s = await standin();
  const stateDir = join(dir, 'crash-state');
  const trigger = join(dir, 'crash-now');
  const w = spawn(watchArgs(s, stateDir, ['--vip', '10.0.0.50']), { crash: { trigger, kind: 'exception' } });
  await waitFor(() => existsSync(join(stateDir, '10.0.0.50.up')), { timeoutMs: 15_000, what: `.up; stderr: ${w.stderr.slice(-400)}` });
  await writeFile(trigger, '');
  const exited = await Promise.race([w.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 15_000).unref())]);
  assert.notEqual(exited, 'hung', 'the process ended');
  assert.deepEqual(exited, { code: 1, signal: null });
  assert.deepEqual(
    (await readdir(stateDir)).filter((n) => /\.(up|down)$/.test(n)),
    ['10.0.0.50.down'],
  );
  const record = JSON.parse(await readFile(join(stateDir, '10.0.0.50.down'), 'utf8')) as { reason: string };
  assert.match(record.reason, /watcher stopped \(uncaught exception\)/);
  const fatal = w.logs.find((l) => l.level === 60);
  assert.equal(fatal?.msg, 'uncaught exception: shutting down');
  assert.match(String(fatal?.err), /injected exception/);
  assert.ok(w.logs.some((l) => l.msg === 'shutdown complete'));
});

test('an unhandled rejection in proxy ends it through the shutdown with exit 1', async (t) => {
  const ups = await startUpstreams(t, ['a']);
  const trigger = join(dir, 'reject-now');
  const p = spawn(
    [
      'proxy',
      '--listen',
      '127.0.0.1:0',
      '--upstream',
      `127.0.0.1:${ups[0]!.address.port}`,
      '--health-check',
      'tcp',
      '--admin-address',
      'off',
      '--shutdown-grace',
      '200ms',
    ],
    { crash: { trigger, kind: 'rejection' } },
  );
  await p.waitForLog(/^frontend listening$/);
  await writeFile(trigger, '');
  const exited = await Promise.race([p.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 15_000).unref())]);
  assert.deepEqual(exited, { code: 1, signal: null });
  assert.match(String(p.logs.find((l) => l.level === 60)?.err), /injected rejection/);
  assert.ok(
    p.logs.some((l) => l.msg === 'proxy closing: no new connections, waiting for open ones'),
    'the ordered shutdown ran',
  );
});

test('watch: a token file that disappears is a local fault: the verdict is kept, /readyz and /status say why, logged once', async () => {
  const s = await standin('watch-token');
  const stateDir = join(dir, 'local-state');
  const tokenFile = join(dir, 'watch-token');
  await writeFile(tokenFile, 'watch-token\n');
  const w = spawn([
    ...watchArgs(s, stateDir, ['--vip', '10.0.0.60', '--token-file', tokenFile, '--fall', '2']).filter((a) => a !== 'off' && a !== '--admin-address'),
    ...ADMIN_TOKEN.args,
    '--admin-address',
    '127.0.0.1:0',
  ]);
  const admin = await w.adminPort();
  const base = `http://127.0.0.1:${admin}`;
  await waitFor(async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200, {
    timeoutMs: 15_000,
    what: `ready; stderr: ${w.stderr.slice(-400)}`,
  });
  await unlink(tokenFile);
  await w.waitForLog(/^health probe hit a local fault/);
  const requests = s.requests;
  // Many probe intervals with fall 2: the verdict must not move.
  const localProbes = async () =>
    Number(/kubeward_watch_probes_total\{reason="local"[^}]*\} (\d+)/.exec(await (await fetch(`${base}/metrics`)).text())?.[1] ?? 0);
  await waitFor(async () => (await localProbes()) >= 10, { timeoutMs: 10_000, what: 'ten local probes counted' });
  const readyz = await fetch(`${base}/readyz`);
  assert.equal(readyz.status, 503);
  assert.match(await readyz.text(), /local fault: probes cannot run \(cannot read token file .*ENOENT.*\); published up is kept/);
  const status = (await (await fetch(`${base}/status`, { headers: ADMIN_TOKEN.headers })).json()) as { state: string; localFault: string | null };
  assert.equal(status.state, 'up');
  assert.match(status.localFault ?? '', /cannot read token file/);
  assert.ok(existsSync(join(stateDir, '10.0.0.60.up')) && !existsSync(join(stateDir, '10.0.0.60.down')), '.up stays');
  assert.equal(s.requests, requests, 'no probe reached the apiserver without a token');
  assert.equal(w.logs.filter((l) => /^health probe hit a local fault/.test(l.msg)).length, 1, 'logged once per streak');
  assert.equal(w.logs.filter((l) => l.msg === 'apiserver is down').length, 0);
  await writeFile(tokenFile, 'watch-token\n');
  await w.waitForLog(/^health probes run again: the local fault is over$/);
  await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, { timeoutMs: 10_000, what: 'ready again' });
});

test('watch: --lock-file=--help is a file named --help, never an option of flock(1)', async () => {
  const s = await standin();
  const cwd = await mkdtemp(join(dir, 'cwd-'));
  const w = spawn([...watchArgs(s, join(cwd, 'state'), ['--vip', '10.0.0.70']), '--lock-file=--help'], { cwd });
  const locked = await w.waitForLog(/^lock acquired$/);
  assert.equal(locked.lock, join(cwd, '--help'));
  assert.ok(existsSync(join(cwd, '--help')));
  // A stray SIGHUP or SIGUSR2 (Node's default: die at once) is logged and ignored.
  await waitFor(() => existsSync(join(cwd, 'state', '10.0.0.70.up')), { timeoutMs: 15_000, what: '.up' });
  w.signal('SIGHUP');
  w.signal('SIGUSR2');
  await w.waitForLog(/^signal ignored/, { where: (l) => l.signal === 'SIGUSR2' });
  assert.equal(w.child.exitCode, null, 'still running');
  w.signal('SIGTERM');
  assert.equal((await w.exited).code, 0);
  assert.ok(existsSync(join(cwd, 'state', '10.0.0.70.down')), 'SIGTERM still published down');
});
