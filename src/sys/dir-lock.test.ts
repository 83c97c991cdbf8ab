import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireLock } from './dir-lock.ts';

test('a second holder waits, and gets the lock when the first releases it', async () => {
  const path = join(await mkdtemp(join(tmpdir(), 'kw-lock-')), 'x.lock');
  const first = await acquireLock({ path, timeoutMs: 1000 });
  let waited = false;
  const second = acquireLock({ path, timeoutMs: 5000, onWait: () => (waited = true) });
  await new Promise((r) => setTimeout(r, 300));
  await first.release();
  const held = await second;
  assert.equal(waited, true);
  await held.release();
});

test('waiting past the timeout fails with E_LOCK_TIMEOUT', async () => {
  const path = join(await mkdtemp(join(tmpdir(), 'kw-lock-')), 'x.lock');
  const first = await acquireLock({ path, timeoutMs: 1000 });
  try {
    await assert.rejects(acquireLock({ path, timeoutMs: 300 }), (err: Error & { code?: string }) => err.code === 'E_LOCK_TIMEOUT');
  } finally {
    await first.release();
  }
});

test('a lock in a directory that does not exist is an E_IO error naming the path', async () => {
  await assert.rejects(acquireLock({ path: '/nonexistent-kw/x.lock', timeoutMs: 100 }), /nonexistent-kw\/x.lock/);
});
