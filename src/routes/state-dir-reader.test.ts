import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSilentLogger } from '../base/logger.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { StateDirReader } from './state-dir-reader.ts';

test('the reader creates the directory, reports changes through inotify, and skips dot-files', async (t) => {
  const parent = await mkdtemp(join(tmpdir(), 'kw-reader-'));
  t.after(() => rm(parent, { recursive: true, force: true }));
  const dir = join(parent, 'cloud-routes');
  let changes = 0;
  const reader = new StateDirReader(dir, () => changes++, createSilentLogger());
  t.after(() => reader.close());
  await reader.ensureWatching();
  assert.equal(reader.watching, true);
  await writeFile(join(dir, '10.0.0.2.up'), '');
  await writeFile(join(dir, '.10.0.0.2.down.1234.tmp'), '');
  await waitFor(() => changes > 0, { what: 'an inotify event' });
  assert.deepEqual(await reader.read(), [{ name: '10.0.0.2.up', content: '' }]);
});

test('a directory removed and made again is watched again after ensureWatching', async (t) => {
  const parent = await mkdtemp(join(tmpdir(), 'kw-reader-'));
  t.after(() => rm(parent, { recursive: true, force: true }));
  const dir = join(parent, 'cloud-routes');
  let changes = 0;
  const reader = new StateDirReader(dir, () => changes++, createSilentLogger());
  t.after(() => reader.close());
  await reader.ensureWatching();
  await rm(dir, { recursive: true });
  assert.deepEqual(await reader.read(), [], 'a missing directory reads as empty');
  await reader.ensureWatching();
  const before = changes;
  await writeFile(join(dir, '10.0.0.2.down'), '');
  await waitFor(() => changes > before, { what: 'an event from the new directory' });
});
