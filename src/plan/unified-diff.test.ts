import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execCommand } from '../sys/exec.ts';
import { unifiedDiff } from './unified-diff.ts';

test('equal texts give an empty diff', () => {
  assert.equal(unifiedDiff('a\nb\n', 'a\nb\n', 'old', 'new'), '');
});

test('a changed line gives one hunk with its context', () => {
  const d = unifiedDiff('a\nb\nc\nd\n', 'a\nB\nc\nd\n', 'old', 'new', 1);
  assert.equal(d, '--- old\n+++ new\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n');
});

test('adding to and creating a file are numbered like diff -u', () => {
  assert.equal(unifiedDiff('', 'x\ny\n', 'a', 'b'), '--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n');
  assert.equal(unifiedDiff('x\n', '', 'a', 'b'), '--- a\n+++ b\n@@ -1 +0,0 @@\n-x\n');
});

test('hunks and line numbers match GNU diff -u on a multi-change text', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-diff-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const before = Array.from({ length: 40 }, (_, i) => `line ${i}`);
  const after = [...before];
  after.splice(3, 1, 'changed 3');
  after.splice(20, 2);
  after.splice(35, 0, 'inserted a', 'inserted b');
  after.push('tail');
  const oldText = before.join('\n') + '\n';
  const newText = after.join('\n') + '\n';
  await writeFile(join(dir, 'a'), oldText);
  await writeFile(join(dir, 'b'), newText);
  const gnu = await execCommand(['diff', '-u', '--label', 'a', '--label', 'b', join(dir, 'a'), join(dir, 'b')], { okCodes: [1] });
  assert.equal(unifiedDiff(oldText, newText, 'a', 'b'), gnu.stdout);
});
