import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeResultBase } from './result-name.ts';

test('a result name already taken by any of its files is skipped; the first free suffix wins', () => {
  const taken = new Set(['/r/2026-11-24.json', '/r/2026-11-24-2.md', '/r/operator-2026-11-24.json']);
  const has = (p: string) => taken.has(p);
  assert.equal(freeResultBase('/r', '2026-11-23', ['.json', '.md'], has), '2026-11-23');
  // .json of the plain name and .md of -2 are taken: -3 is the first whose files are both free.
  assert.equal(freeResultBase('/r', '2026-11-24', ['.json', '.md'], has), '2026-11-24-3');
  assert.equal(freeResultBase('/r', 'operator-2026-11-24', ['.json'], has), 'operator-2026-11-24-2');
});

test('on disk: an existing result is never the name given back', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-result-name-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  assert.equal(freeResultBase(dir, 'day', ['.json']), 'day');
  await writeFile(join(dir, 'day.json'), '{}');
  assert.equal(freeResultBase(dir, 'day', ['.json']), 'day-2');
});
