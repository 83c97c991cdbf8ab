import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { watchLoopStall } from './loop-stall.ts';
import { failedProbe, judgeStall, type ProbeReason } from './probe-result.ts';

/** Holds this thread (and so the event loop) for ms, as a long GC pause or a burst of work does. */
function standStill(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

test('the watch reports how long the loop stood still while it ran, and nothing for a loop that kept turning', async () => {
  const stalled = watchLoopStall();
  standStill(400);
  assert.ok(stalled.stop() >= 250, 'a 400 ms stand-still is seen');
  const quiet = watchLoopStall();
  assert.equal(quiet.stop(), 0, 'stopped at once: no stall');
  const turning = watchLoopStall(20);
  await new Promise((r) => setTimeout(r, 60));
  assert.ok(turning.stop() < 1000, 'a loop that turns is not a stall (a loaded machine may still delay a tick)');
});

test('a timeout during a stall of our own loop is a local fault; a timeout without one stands', () => {
  const timeout = failedProbe('timeout', 1000, 'no answer within 1000 ms');
  assert.equal(judgeStall(timeout, 0).reason, 'timeout');
  assert.equal(judgeStall(timeout, 249).reason, 'timeout', 'under a quarter of the wait');
  const local = judgeStall(timeout, 250);
  assert.equal(local.reason, 'local');
  assert.equal(local.latencyMs, 1000);
  assert.match(local.detail, /stood still for 250 ms of the check's 1000 ms \(no answer within 1000 ms\)/);
  assert.equal(judgeStall(failedProbe('timeout', 200, 'x'), 60).reason, 'timeout', 'a stall under 100 ms never counts');
  assert.equal(judgeStall(failedProbe('timeout', 200, 'x'), 100).reason, 'local');
});

test('only timeouts are ever re-judged, and a stall never makes a result worse', () => {
  const reasons: ProbeReason[] = ['ok', 'http-status', 'refused', 'timeout', 'tls', 'reset', 'unreachable', 'dns', 'local', 'error'];
  fc.assert(
    fc.property(fc.constantFrom(...reasons), fc.nat(120_000), fc.nat(120_000), (reason, latencyMs, stallMs) => {
      const r = reason === 'ok' ? { ok: true, status: 200, latencyMs, reason, detail: 'ok' } : failedProbe(reason, latencyMs, 'found');
      const judged = judgeStall(r, stallMs);
      if (reason !== 'timeout') assert.deepEqual(judged, r);
      else assert.ok(judged.reason === 'timeout' || judged.reason === 'local');
      assert.equal(judged.ok, r.ok);
    }),
  );
});
