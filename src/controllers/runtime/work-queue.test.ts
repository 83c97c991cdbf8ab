import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../base/clock.ts';
import { WorkQueue } from './work-queue.ts';
import { backoffDelayMs } from './backoff.ts';

test('a key added while it is processed comes back once, after it is done', async () => {
  const q = new WorkQueue(new ManualClock());
  q.add('a');
  assert.equal(await q.get(), 'a');
  q.add('a');
  q.add('a');
  assert.equal(q.depth, 0, 'not queued while in flight');
  q.done('a');
  assert.equal(q.depth, 1);
  assert.equal(await q.get(), 'a');
  q.done('a');
  assert.equal(q.idle, true);
});

test('delayed adds keep the earliest deadline per key', async () => {
  const clock = new ManualClock(0);
  const q = new WorkQueue(clock);
  q.addAfter('a', 1000);
  q.addAfter('a', 300);
  q.addAfter('a', 5000);
  clock.advance(299);
  await Promise.resolve();
  assert.equal(q.depth, 0);
  clock.advance(1);
  await new Promise((r) => setImmediate(r));
  assert.equal(q.depth, 1);
  assert.equal(await q.get(), 'a');
});

test('failures back off per key, doubling up to the cap, and forget resets them', () => {
  const cases: [number, number][] = [
    [0, 0],
    [1, 5_000],
    [2, 10_000],
    [3, 20_000],
    [7, 300_000],
    [100, 300_000],
  ];
  for (const [n, want] of cases) assert.equal(backoffDelayMs(n), want, `${n} failures`);
  const q = new WorkQueue(new ManualClock(), { baseMs: 100, maxMs: 1000 });
  assert.equal(q.addWithBackoff('a'), 100);
  assert.equal(q.addWithBackoff('a'), 200);
  assert.equal(q.addWithBackoff('b'), 100, 'other keys have their own count');
  q.forget('a');
  assert.equal(q.addWithBackoff('a'), 100);
});

test('shutting down releases waiting workers', async () => {
  const q = new WorkQueue(new ManualClock());
  const waiting = q.get();
  q.shutDown();
  assert.equal(await waiting, undefined);
});
