// bin/kubeward.js takes its settings per mode from bin/mode-flags.js: watch skips the parse of Node's
// bundled root certificates, which it never consults (no other mode changes its CA store), and the
// operator adds --optimize-for-size to the V8 list every mode gets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:tls';
import { createTestCa } from '../testkit/certs.ts';
import { modeNodeFlags, modeV8Flags } from '../bin/mode-flags.js';

test('only watch gets --use-openssl-ca, and a CA store chosen in NODE_OPTIONS wins', () => {
  assert.deepEqual(modeNodeFlags('watch', undefined), ['--use-openssl-ca']);
  for (const mode of ['proxy', 'routes', 'agent', 'operator', 'deorbit', 'routegc', 'flight', 'plan', 'check-cert', 'demo', '--help', undefined])
    assert.deepEqual(modeNodeFlags(mode, undefined), [], String(mode));
  for (const opt of ['--use-bundled-ca', '--use-openssl-ca', '--max-old-space-size=64 --use-system-ca'])
    assert.deepEqual(modeNodeFlags('watch', opt), [], `NODE_OPTIONS=${opt}`);
  assert.deepEqual(modeNodeFlags('watch', '--max-old-space-size=64'), ['--use-openssl-ca']);
});

test('the operator adds --optimize-for-size to the shared V8 list; every other mode keeps the list as it is', () => {
  const shared = ['--max-semi-space-size=1', '--single-threaded-gc'];
  assert.deepEqual(modeV8Flags('operator', shared), ['--max-semi-space-size=1', '--single-threaded-gc', '--optimize-for-size']);
  for (const mode of ['proxy', 'routes', 'agent', 'watch', 'deorbit', 'routegc', 'flight', 'plan', 'demo', '--help', undefined])
    assert.deepEqual(modeV8Flags(mode, shared), shared, String(mode));
  assert.deepEqual(shared, ['--max-semi-space-size=1', '--single-threaded-gc'], 'the shared list is not changed');
  assert.deepEqual(modeV8Flags('operator', []), ['--optimize-for-size']);
});

test('bin/kubeward.js takes the V8 list from modeV8Flags (one home for per-mode flags)', async () => {
  const entry = await readFile(new URL('../bin/kubeward.js', import.meta.url), 'utf8');
  assert.match(entry, /modeV8Flags\(process\.argv\[2\], DEFAULT_FLAGS\)/);
  assert.doesNotMatch(entry, /--optimize-for-size'/, 'no operator flag left in bin/kubeward.js');
});

test('under --use-openssl-ca a connection verifies against its own CA file and refuses a server of another CA, as watch probes', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-ca-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await Promise.all([mkdir(join(dir, 'ca')), mkdir(join(dir, 'other'))]);
  const ca = await createTestCa('kw-flags-ca', join(dir, 'ca'));
  const server = await ca.issueServer('apiserver', ['IP:127.0.0.1']);
  const other = await createTestCa('kw-other-ca', join(dir, 'other'));
  const tlsServer = createServer({ cert: await readFile(server.certFile), key: await readFile(server.keyFile) }, (s) => s.end('ok'));
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
  t.after(() => tlsServer.close());
  const port = (tlsServer.address() as AddressInfo).port;
  const client = (caFile: string) =>
    new Promise<string>((resolve) => {
      const script =
        "const tls = require('node:tls'); const fs = require('node:fs');" +
        `const s = tls.connect({ host: '127.0.0.1', port: ${port}, secureContext: tls.createSecureContext({ ca: fs.readFileSync(${JSON.stringify(caFile)}) }) });` +
        "s.on('secureConnect', () => { process.stdout.write('verified'); s.destroy(); }); s.on('error', (e) => process.stdout.write(e.code ?? e.message));";
      execFile(process.execPath, [...modeNodeFlags('watch', undefined), '-e', script], { env: { PATH: process.env.PATH } }, (_err, stdout) => resolve(stdout));
    });
  assert.equal(await client(ca.certFile), 'verified');
  assert.match(await client(other.certFile), /UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|UNABLE_TO_GET_ISSUER/);
});
