// bin/kubeward.js takes its settings per mode from bin/mode-flags.js: watch skips the parse of Node's
// bundled root certificates, which it never consults (no other mode changes its CA store), and the
// operator adds --optimize-for-size to the V8 list every mode gets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:tls';
import { createTestCa } from '../testkit/certs.ts';
import { MALLOC_NAMES, OPERATOR_MALLOC, modeEnv, modeNodeFlags, modeV8Flags } from '../bin/mode-flags.js';
import fc from 'fast-check';

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

test('only the operator gets malloc settings; a variable already set wins, even an empty one', () => {
  assert.deepEqual(modeEnv('operator', {}), { ...OPERATOR_MALLOC });
  assert.ok(Object.keys(OPERATOR_MALLOC).length > 0);
  for (const mode of ['proxy', 'routes', 'agent', 'watch', 'deorbit', 'routegc', 'flight', 'plan', 'check-cert', 'demo', '--help', undefined])
    assert.deepEqual(modeEnv(mode, {}), {}, String(mode));
  const own = Object.fromEntries(Object.keys(OPERATOR_MALLOC).map((k) => [k, '']));
  assert.deepEqual(modeEnv('operator', own), {});
  assert.deepEqual(
    modeEnv('operator', { MALLOC_MMAP_THRESHOLD_: '65536' }),
    Object.fromEntries(Object.entries(OPERATOR_MALLOC).filter(([k]) => k !== 'MALLOC_MMAP_THRESHOLD_')),
  );
});

test('KUBEWARD_MALLOC_ENV replaces the list in every mode; "" gives glibc its defaults', () => {
  assert.deepEqual(modeEnv('operator', { KUBEWARD_MALLOC_ENV: '' }), {});
  assert.deepEqual(modeEnv('operator', { KUBEWARD_MALLOC_ENV: '  ' }), {});
  assert.deepEqual(modeEnv('proxy', { KUBEWARD_MALLOC_ENV: 'MALLOC_ARENA_MAX=2  MALLOC_TRIM_THRESHOLD_=65536' }), {
    MALLOC_ARENA_MAX: '2',
    MALLOC_TRIM_THRESHOLD_: '65536',
  });
  assert.deepEqual(modeEnv('operator', { KUBEWARD_MALLOC_ENV: 'MALLOC_ARENA_MAX=2', MALLOC_ARENA_MAX: '4' }), {});
});

test('KUBEWARD_MALLOC_ENV accepts only NAME=number with a glibc malloc name, and names the bad word', () => {
  for (const bad of [
    'MALLOC_ARENA_MAX',
    'MALLOC_ARENA_MAX=',
    'MALLOC_ARENA_MAX=-1',
    'MALLOC_ARENA_MAX=2k',
    'LD_PRELOAD=1',
    'PATH=/tmp',
    'malloc_arena_max=2',
    'MALLOC_ARENA_MAX=1\nX=2',
  ])
    assert.throws(
      () => modeEnv('operator', { KUBEWARD_MALLOC_ENV: bad }),
      (err: Error) => err.message.startsWith('KUBEWARD_MALLOC_ENV: "') && err.message.includes('NAME=number'),
      bad,
    );
  fc.assert(
    fc.property(fc.string({ maxLength: 60 }), (text) => {
      let added: Record<string, string>;
      try {
        added = modeEnv('proxy', { KUBEWARD_MALLOC_ENV: text });
      } catch (err) {
        assert.match((err as Error).message, /^KUBEWARD_MALLOC_ENV: "/);
        return;
      }
      for (const [k, v] of Object.entries(added)) {
        assert.ok(MALLOC_NAMES.includes(k), k);
        assert.match(v, /^\d{1,12}$/);
      }
    }),
    { numRuns: 500 },
  );
  fc.assert(
    fc.property(fc.constantFrom(...MALLOC_NAMES), fc.nat(), (name, n) => {
      assert.deepEqual(modeEnv('operator', { KUBEWARD_MALLOC_ENV: `${name}=${n}` }), { [name]: String(n) });
    }),
  );
});

test('bin/kubeward.js execs the operator with its malloc settings, and a bad KUBEWARD_MALLOC_ENV exits 2 with one line', async (t) => {
  // A copy of bin/ next to a stand-in dist/main.js that prints what the exec'd process got.
  const dir = await mkdtemp(join(tmpdir(), 'kw-env-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await Promise.all([mkdir(join(dir, 'bin')), mkdir(join(dir, 'dist'))]);
  for (const f of ['kubeward.js', 'mode-flags.js']) await copyFile(new URL(`../bin/${f}`, import.meta.url), join(dir, 'bin', f));
  await writeFile(
    join(dir, 'dist', 'main.js'),
    'export async function main(argv) { process.stdout.write(JSON.stringify({ argv, pid: process.pid, env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("MALLOC_"))) })); }\n',
  );
  const run = (mode: string, extra: Record<string, string> = {}) =>
    spawnSync(process.execPath, [join(dir, 'bin', 'kubeward.js'), mode], { encoding: 'utf8', env: { PATH: process.env.PATH, ...extra }, timeout: 30_000 });
  const op = run('operator');
  assert.equal(op.status, 0, op.stderr);
  assert.deepEqual(JSON.parse(op.stdout).env, { ...OPERATOR_MALLOC });
  assert.deepEqual(JSON.parse(op.stdout).argv, ['operator']);
  assert.deepEqual(JSON.parse(run('proxy').stdout).env, {});
  assert.deepEqual(JSON.parse(run('operator', { KUBEWARD_MALLOC_ENV: '' }).stdout).env, {});
  assert.deepEqual(JSON.parse(run('operator', { MALLOC_MMAP_THRESHOLD_: '65536' }).stdout).env.MALLOC_MMAP_THRESHOLD_, '65536');
  const bad = run('operator', { KUBEWARD_MALLOC_ENV: 'LD_PRELOAD=/tmp/x.so' });
  assert.equal(bad.status, 2);
  assert.equal(bad.stdout, '');
  assert.match(bad.stderr, /^kubeward: KUBEWARD_MALLOC_ENV: "LD_PRELOAD=\/tmp\/x.so" is not NAME=number[^\n]*\n$/);
});
