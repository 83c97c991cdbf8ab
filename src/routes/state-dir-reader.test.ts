import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSilentLogger } from '../base/logger.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { StateDirReader } from './state-dir-reader.ts';

const execFileP = promisify(execFile);

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

test('a huge .up file is never read whole: its size is checked first and it is marked too large', async (t) => {
  const parent = await mkdtemp(join(tmpdir(), 'kw-reader-'));
  t.after(() => rm(parent, { recursive: true, force: true }));
  const reader = new StateDirReader(parent, () => {}, createSilentLogger(), join(parent, 'beats'));
  t.after(() => reader.close());
  // A sparse 8 GiB file: reading it whole would take the process down.
  await truncate(join(parent, '10.0.0.2.up'), 0).catch(() => writeFile(join(parent, '10.0.0.2.up'), ''));
  await truncate(join(parent, '10.0.0.2.up'), 8 * 1024 ** 3);
  await writeFile(join(parent, '10.0.0.3.down'), '{}');
  await execFileP('mkfifo', [join(parent, '10.0.0.4.up')]);
  const before = process.memoryUsage().rss;
  const files = await reader.read();
  assert.deepEqual(
    files.sort((a, b) => a.name.localeCompare(b.name)),
    [
      { name: '10.0.0.2.up', content: '', tooLarge: true },
      { name: '10.0.0.3.down', content: '{}' },
    ],
  );
  assert.ok(process.memoryUsage().rss - before < 64 * 1024 ** 2, 'nothing large was buffered');
  assert.deepEqual(await reader.readBeats(), [], 'a missing heartbeat directory reads as empty');
});
