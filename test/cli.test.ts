// The program's front door: help, version, and one clear line with exit 2 for bad usage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { runKubeward } from '../testkit/kubeward-process.ts';

test('--help lists the modes and exits 0', async () => {
  const r = await runKubeward(['--help']);
  assert.equal(r.code, 0);
  for (const mode of ['watch', 'demo']) assert.match(r.stdout, new RegExp(`^  ${mode} `, 'm'));
  assert.match(r.stdout, /Exit codes: 0 done, 1 failed, 2 bad usage or config/);
});

test('--version prints the package version', async () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  const r = await runKubeward(['--version']);
  assert.equal(r.code, 0);
  assert.equal(r.stdout.trim(), pkg.version);
});

test("a mode's --help shows its flags with defaults and examples", async () => {
  const r = await runKubeward(['watch', '--help']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /--fall <n>\s+consecutive failures that declare down\s+\(default: 8\)/);
  assert.match(r.stdout, /Examples:/);
});

test('an unknown mode or flag exits 2 with one line and a pointer to --help', async () => {
  const r1 = await runKubeward(['wach']);
  assert.equal(r1.code, 2);
  assert.match(r1.stderr, /^kubeward: unknown command 'wach' \(Did you mean watch\?\); see "kubeward --help"\n$/);
  const r2 = await runKubeward(['--frobnicate']);
  assert.equal(r2.code, 2);
  assert.match(r2.stderr, /^kubeward: unknown option '--frobnicate'/);
});

test('the installed entry point refuses an old Node with a clear message', async (t) => {
  const { execFileSync, spawnSync } = await import('node:child_process');
  let systemNode: string;
  try {
    systemNode = execFileSync('sh', ['-c', 'command -v /usr/bin/node || command -v /usr/local/bin/node'], { encoding: 'utf8' }).trim();
  } catch {
    return t.skip('no system node besides the pinned one');
  }
  const version = spawnSync(systemNode, ['--version'], { encoding: 'utf8' }).stdout.trim();
  if (Number(version.slice(1).split('.')[0]) >= 24) return t.skip(`the system node is ${version}, new enough`);
  const r = spawnSync(systemNode, [new URL('../bin/kubeward.js', import.meta.url).pathname, '--help'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /kubeward needs Node.js 24 or newer; this is v\d+/);
});

test('an admin address already in use exits 2 with one line naming --admin-address, no stack trace', async (t) => {
  const { createServer } = await import('node:net');
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.after(() => holder.close());
  const port = (holder.address() as { port: number }).port;
  const r = await runKubeward([
    'proxy',
    '--listen',
    '127.0.0.1:0',
    '--upstream',
    '127.0.0.1:1',
    '--health-check',
    'tcp',
    '--admin-address',
    `127.0.0.1:${port}`,
  ]);
  assert.equal(r.code, 2, r.stderr);
  const plain = r.stderr
    .trimEnd()
    .split('\n')
    .filter((l) => !l.startsWith('{'));
  assert.equal(plain.length, 1, r.stderr);
  assert.match(
    plain[0]!,
    new RegExp(`^kubeward proxy: --admin-address 127\\.0\\.0\\.1:${port}: cannot listen \\(.*EADDRINUSE.*\\); pick a free port or "off"$`),
  );
  assert.doesNotMatch(r.stderr, /\n\s+at .+:\d+:\d+/, 'no stack trace');
});
