import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../base/clock.ts';
import type { ProbeResult } from '../probe/probe-result.ts';
import { HealthChecker } from './health-checker.ts';

const ok: ProbeResult = { ok: true, status: 200, latencyMs: 1, reason: 'ok', detail: 'ok' };
const settle = () => new Promise((r) => setImmediate(r));

test('each upstream is probed at once, then every interval start to start, and a hung probe delays no other', async () => {
  const clock = new ManualClock(0);
  const starts: [string, number][] = [];
  const pending = new Map<string, () => void>();
  const checker = new HealthChecker({
    intervalMs: 1000,
    clock,
    random: () => 0.5, // no jitter
    probe: (key) => {
      starts.push([key, clock.now()]);
      if (key === 'slow') return new Promise((resolve) => pending.set(key, () => resolve(ok)));
      return Promise.resolve(ok);
    },
    onResult: () => {},
  });
  checker.sync(['fast', 'slow']);
  await settle();
  for (let i = 0; i < 3; i++) {
    clock.advance(1000);
    await settle();
  }
  assert.deepEqual(
    starts.filter(([k]) => k === 'fast').map(([, at]) => at),
    [0, 1000, 2000, 3000],
  );
  assert.deepEqual(
    starts.filter(([k]) => k === 'slow').map(([, at]) => at),
    [0],
    'the slow one is still on its first probe',
  );
  pending.get('slow')!(); // answers at 3000: later than its interval, so the next probe starts at once
  await settle();
  clock.advance(0); // a zero-length sleep still goes through the clock
  await settle();
  assert.deepEqual(starts.at(-1), ['slow', 3000]);
  pending.get('slow')!();
  await checker.close();
});

test('sync stops the loops of removed upstreams and close stops them all', async () => {
  const clock = new ManualClock(0);
  const probed: string[] = [];
  const checker = new HealthChecker({ intervalMs: 100, clock, random: () => 0.5, probe: async (key) => (probed.push(key), ok), onResult: () => {} });
  checker.sync(['a', 'b']);
  await settle();
  checker.sync(['a']);
  clock.advance(100);
  await settle();
  assert.deepEqual(probed, ['a', 'b', 'a']);
  await checker.close();
  clock.advance(1000);
  await settle();
  assert.deepEqual(probed, ['a', 'b', 'a']);
});

test("a check that times out while this process's loop stands still reports a local fault, not the upstream's", async () => {
  const results: ProbeResult[] = [];
  const clock = new ManualClock(0);
  let stall = true;
  const checker = new HealthChecker({
    intervalMs: 1000,
    clock,
    random: () => 0.5, // no jitter: the second check starts when the clock reaches 1000
    probe: () => {
      // The deadline fires late because the loop stood still (a GC pause, a starved CPU).
      if (stall) {
        const until = performance.now() + 400;
        while (performance.now() < until);
      }
      return Promise.resolve({ ok: false, status: 0, latencyMs: 1000, reason: 'timeout', detail: 'no answer within 1000 ms' });
    },
    onResult: (_key, r) => results.push(r),
  });
  checker.sync(['a']);
  await settle();
  stall = false;
  clock.advance(1000);
  await settle();
  await checker.close();
  assert.equal(results[0]?.reason, 'local');
  assert.match(results[0]!.detail, /stood still/);
  assert.equal(results[1]?.reason, 'timeout', 'the same timeout without a stall stands');
});
