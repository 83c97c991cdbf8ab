import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../base/clock.ts';
import { LEAN_AFTER_START_MS, leanAfterStart } from './v8-memory-mode.ts';

const turn = () => new Promise((r) => setImmediate(r));

test('V8 goes lean once, after the first cycles and the start burst, not before', async () => {
  const clock = new ManualClock(0);
  const set: string[] = [];
  const lean = leanAfterStart({ clock, setFlags: (f) => set.push(f) });
  lean.started(5000);
  lean.started(5000); // a second start (the informer resynced) does not set it twice
  clock.advance(5000 + LEAN_AFTER_START_MS - 1);
  await turn();
  assert.deepEqual(set, []);
  clock.advance(1);
  await turn();
  assert.deepEqual(set, ['--optimize-for-size']);
  clock.advance(10 * LEAN_AFTER_START_MS);
  await turn();
  assert.deepEqual(set, ['--optimize-for-size']);
});

test('closed before the burst is over: no flag is set', async () => {
  const clock = new ManualClock(0);
  const set: string[] = [];
  const lean = leanAfterStart({ clock, setFlags: (f) => set.push(f) });
  lean.started(0);
  lean.close();
  clock.advance(LEAN_AFTER_START_MS * 2);
  await turn();
  assert.deepEqual(set, []);
});
