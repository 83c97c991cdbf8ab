import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeFailover, medianStop, type RequestRecord } from './failover-analysis.ts';

const ok = (startMs: number, backend: string, latencyMs = 2): RequestRecord => ({ startMs, latencyMs, backend });
const fail = (startMs: number, error: string, latencyMs = 2): RequestRecord => ({ startMs, latencyMs, error });

test('when no request after the event fails, slows or reaches the backend, nothing was affected', () => {
  const r = analyzeFailover([ok(-100, 'b1'), ok(0, 'b2'), ok(500, 'b3')], { affected: 'b1', windowMs: 10_000 });
  assert.equal(r.stopMs, 'none');
  assert.equal(r.requests, 2);
  assert.equal(r.failed, 0);
});

test('the stop time is the start of the last failed, slow or affected request after the event', () => {
  const r = analyzeFailover([ok(10, 'b1'), fail(900, 'timeout', 3000), ok(1500, 'b2', 1200), ok(2000, 'b2')], { affected: 'b1', windowMs: 10_000 });
  assert.equal(r.stopMs, 1500);
  assert.equal(r.failed, 1);
  assert.equal(r.slow, 1);
  assert.deepEqual(r.errors, { timeout: 1 });
});

test('an affected request near the end of the window means it never stopped', () => {
  const r = analyzeFailover([ok(9500, 'b1')], { affected: 'b1', windowMs: 10_000 });
  assert.equal(r.stopMs, 'not-within-window');
});

test('a request in flight at the event that then fails is counted apart from the failures after it', () => {
  const r = analyzeFailover([fail(-5, 'ECONNRESET', 10), fail(-500, 'ECONNRESET', 10), ok(1, 'b2')], { affected: 'b1', windowMs: 10_000 });
  assert.equal(r.inFlightLost, 1);
  assert.equal(r.failed, 0);
});

test('the median stop time sorts "none" first and "not within the window" last', () => {
  assert.equal(medianStop([{ stopMs: 'not-within-window' }, { stopMs: 300 }, { stopMs: 'none' }]), 300);
  assert.equal(medianStop([{ stopMs: 'not-within-window' }, { stopMs: 'not-within-window' }, { stopMs: 'none' }]), 'not-within-window');
  assert.equal(medianStop([]), undefined);
});
