import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '../../admin/metrics.ts';
import { eventLoopFigures, registerEventLoopMetrics } from './event-loop-metrics.ts';

function valueOf(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('a loop blocked for 300 ms shows in the max of the next scrape, and the scrape after starts afresh', async (t) => {
  const registry = new Registry();
  const metrics = registerEventLoopMetrics(registry);
  t.after(() => metrics.stop());
  const names = ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99'].map((k) => `kubeward_nodejs_eventloop_lag_${k}_seconds`);
  const first = await registry.metrics();
  for (const n of names) assert.ok(Number.isFinite(valueOf(first, n)), `${n} in ${first}`);

  // The sampling timer starts on a later turn of the loop: let it run a few times before blocking.
  await new Promise((r) => setTimeout(r, 50));
  const until = Date.now() + 300;
  while (Date.now() < until); // blocks the loop: the sampling timer fires late
  // Bounded poll: the late sample is recorded when the timer runs, a few turns after the block.
  let max = 0;
  for (let i = 0; i < 50 && max < 0.25; i++) {
    await new Promise((r) => setTimeout(r, 20));
    max = Math.max(max, valueOf(await registry.metrics(), 'kubeward_nodejs_eventloop_lag_max_seconds')!);
  }
  assert.ok(max >= 0.25, `max ${max} s after a 300 ms block`);
  // Each scrape reset the histogram: a scrape now covers only the last few ms, not the block.
  await new Promise((r) => setTimeout(r, 50));
  const after = valueOf(await registry.metrics(), 'kubeward_nodejs_eventloop_lag_max_seconds')!;
  assert.ok(after < max, `after the reset: ${after} s, block ${max} s`);
});

test('figures are seconds, and zero when nothing was sampled since the last scrape', () => {
  const none = { count: 0, min: 9223372036854776000, max: 0, mean: NaN, stddev: NaN, percentile: () => 0 };
  assert.deepEqual(eventLoopFigures(none), { min: 0, max: 0, mean: 0, stddev: 0, p50: 0, p90: 0, p99: 0 });
  const some = { count: 3, min: 10e6, max: 250e6, mean: 90e6, stddev: 5e6, percentile: (p: number) => p * 1e6 };
  assert.deepEqual(eventLoopFigures(some), { min: 0.01, max: 0.25, mean: 0.09, stddev: 0.005, p50: 0.05, p90: 0.09, p99: 0.099 });
});
