import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MAX_WORKERS, runDeadlineMs, startSpreadMs, workersFor } from './operator-scale.ts';

test('workers grow with the clusters, within their bounds', () => {
  assert.equal(workersFor(0, 4), 4);
  assert.equal(workersFor(40, 4), 4);
  assert.equal(workersFor(1000, 4), 100);
  assert.equal(workersFor(100_000, 4), MAX_WORKERS);
  fc.assert(
    fc.property(fc.nat(1_000_000), fc.integer({ min: 1, max: 64 }), (n, least) => {
      const w = workersFor(n, least);
      return w >= least && w <= Math.max(least, MAX_WORKERS) && workersFor(n + 1, least) >= w;
    }),
  );
});

test("a run's deadline is shorter than its interval (from 2 s on) and never above a minute", () => {
  assert.equal(runDeadlineMs(10_000), 5000);
  assert.equal(runDeadlineMs(300_000), 60_000);
  fc.assert(fc.property(fc.integer({ min: 2000, max: 3_600_000 }), (i) => runDeadlineMs(i) < i && runDeadlineMs(i) >= 1000));
});

test('first cycles are spread over at most 5 s and half an interval', () => {
  assert.equal(startSpreadMs(1000, 30_000), 5000);
  assert.equal(startSpreadMs(10, 30_000), 50);
  assert.equal(startSpreadMs(1000, 4000), 2000);
  fc.assert(
    fc.property(fc.nat(100_000), fc.integer({ min: 1000, max: 3_600_000 }), (n, i) => {
      const s = startSpreadMs(n, i);
      return s >= 0 && s <= 5000 && s <= i / 2;
    }),
  );
});
