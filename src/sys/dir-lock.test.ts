import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../testkit/wait-for.ts';
import { acquireLock } from './dir-lock.ts';

/** A fresh directory for one test's lock file, removed when the test ends. */
async function lockPath(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kw-lock-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'x.lock');
}

test('a second holder waits, and gets the lock when the first releases it', async (t) => {
  const path = await lockPath(t);
  const first = await acquireLock({ path, timeoutMs: 1000 });
  let waited = false;
  const second = acquireLock({ path, timeoutMs: 5000, onWait: () => (waited = true) });
  await waitFor(() => waited, { what: 'the second holder to report waiting' });
  await first.release();
  const held = await second;
  assert.equal(waited, true);
  await held.release();
});

test('waiting past the timeout fails with E_LOCK_TIMEOUT', async (t) => {
  const path = await lockPath(t);
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
