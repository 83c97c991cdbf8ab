import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../base/clock.ts';
import { createSilentLogger } from '../../base/logger.ts';
import { runPeriodically } from './periodic-loop.ts';

const tick = () => new Promise((r) => setImmediate(r));

test('the first cycle runs at once, the next 1.0-1.5 intervals after the previous ended, failures included', async () => {
  const clock = new ManualClock(0);
  const abort = new AbortController();
  const starts: number[] = [];
  const loop = runPeriodically(
    async () => {
      starts.push(clock.now());
      if (starts.length === 2) throw new Error('Nova said 500');
    },
    { name: 't', intervalMs: 300_000, clock, log: createSilentLogger(), signal: abort.signal, random: () => 1 },
  );
  await tick();
  assert.deepEqual(starts, [0]);
  clock.advance(449_999);
  await tick();
  assert.deepEqual(starts, [0], 'not before 1.5 × interval with the largest jitter');
  clock.advance(1);
  await tick();
  clock.advance(450_000);
  await tick();
  assert.deepEqual(starts, [0, 450_000, 900_000], 'the failed second cycle did not stop the loop');
  abort.abort();
  await loop;
});
