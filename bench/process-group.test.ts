import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessGroup, daemonStdoutDir } from './process-group.ts';

const scratch = (): string => mkdtempSync(join(tmpdir(), 'kw-group-'));

test('with a stdout directory every started process writes its standard output to NAME.N.out there', async (t) => {
  const dir = scratch();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const group = new ProcessGroup(undefined, { stdoutDir: dir });
  const a = group.start('greeter', 'echo', ['first']);
  const b = group.start('greeter', 'echo', ['second']);
  await Promise.all([a.exited, b.exited]);
  assert.equal(readFileSync(join(dir, 'greeter.1.out'), 'utf8'), 'first\n');
  assert.equal(readFileSync(join(dir, 'greeter.2.out'), 'utf8'), 'second\n');
});

test('without one, standard output is discarded and nothing is written', async (t) => {
  const dir = scratch();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const group = new ProcessGroup();
  await group.start('greeter', 'echo', ['nowhere']).exited;
  assert.deepEqual(spawnSync('ls', ['-A', dir], { encoding: 'utf8' }).stdout, '');
});

test('daemonStdoutDir makes the directory, and says why when it cannot', (t) => {
  const dir = scratch();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.deepEqual(daemonStdoutDir(join(dir, 'a/b')), { dir: join(dir, 'a/b') });
  writeFileSync(join(dir, 'file'), '');
  assert.deepEqual(daemonStdoutDir(join(dir, 'file/sub')), { why: 'cannot make it (ENOTDIR)' });
  assert.deepEqual(daemonStdoutDir(''), { why: 'expected a directory' });
});

for (const script of ['run-bench.ts', 'paced-compare.ts']) {
  test(`${script} --daemon-stdout that cannot be made: exit 2 and one line naming the flag, before anything starts`, (t) => {
    const dir = scratch();
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'file'), '');
    const peers = script === 'paced-compare.ts' ? ['--peer', 'nginx', '--peer', 'kubeward'] : [];
    const r = spawnSync(process.execPath, [join(import.meta.dirname, script), ...peers, '--daemon-stdout', join(dir, 'file/sub')], { encoding: 'utf8' });
    assert.equal(r.status, 2, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /--daemon-stdout ".*file\/sub": cannot make it \(ENOTDIR\)$/);
  });
}
