import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { after, ManualClock, type Clock } from '../../base/clock.ts';
import { isKubewardError } from '../../base/errors.ts';
import { deadline } from './deadline.ts';

const tick = () => new Promise((r) => setImmediate(r));

test('a deadline that passes aborts with E_TIMEOUT, says it expired, and lets go of the parent', async () => {
  const clock = new ManualClock(0);
  const parent = new AbortController();
  const d = deadline(clock, 5000, 'routegc run of t/k1', parent.signal);
  assert.equal(getEventListeners(parent.signal, 'abort').length, 1);
  clock.advance(4999);
  await tick();
  assert.equal(d.signal.aborted, false);
  clock.advance(1);
  await tick();
  assert.equal(d.signal.aborted, true);
  assert.equal(d.expired, true);
  assert.ok(isKubewardError(d.signal.reason, 'E_TIMEOUT'), String(d.signal.reason));
  assert.match((d.signal.reason as Error).message, /routegc run of t\/k1 did not finish within 5000 ms/);
  assert.equal(getEventListeners(parent.signal, 'abort').length, 0);
  // The parent falling later changes nothing: the reason stays the deadline's.
  parent.abort(new Error('leadership lost'));
  assert.ok(isKubewardError(d.signal.reason, 'E_TIMEOUT'));
  d.clear();
});

test("the parent's abort is a cancel, not a deadline: its own reason, never expired, even past the deadline", async () => {
  const clock = new ManualClock(0);
  const parent = new AbortController();
  const d = deadline(clock, 5000, 'flight run', parent.signal);
  const why = new Error('leadership lost: could not renew');
  parent.abort(why);
  assert.equal(d.signal.aborted, true);
  assert.equal(d.signal.reason, why);
  assert.equal(d.expired, false);
  clock.advance(10_000);
  await tick();
  assert.equal(d.expired, false, 'the timer that comes due after a cancel does not turn it into a deadline');
  assert.equal(d.signal.reason, why);
  d.clear();
});

test('a parent aborted before the deadline is made aborts it at once with its reason', () => {
  const clock = new ManualClock(0);
  const why = new Error('controller stopped');
  const d = deadline(clock, 5000, 'run', AbortSignal.abort(why));
  assert.equal(d.signal.reason, why);
  assert.equal(d.expired, false);
  d.clear();
});

test('clear cancels the timer and leaves no listener on the parent (nearly every deadline ends this way)', async () => {
  const clock = new ManualClock(0);
  const parent = new AbortController();
  const deadlines = Array.from({ length: 50 }, () => deadline(clock, 5000, 'run', parent.signal));
  assert.equal(getEventListeners(parent.signal, 'abort').length, 50);
  for (const d of deadlines) d.clear();
  assert.equal(getEventListeners(parent.signal, 'abort').length, 0, 'a long-lived fence must not collect a listener per run');
  clock.advance(60_000);
  await tick();
  assert.ok(deadlines.every((d) => !d.signal.aborted && !d.expired));
});

test('without a parent, only the deadline aborts it', async () => {
  const clock = new ManualClock(0);
  const d = deadline(clock, 100, 'call');
  clock.advance(100);
  await tick();
  assert.ok(d.expired && isKubewardError(d.signal.reason, 'E_TIMEOUT'));
});

test('a deadline on a clock without a plain timer (sleep only) fires and clears the same way', async () => {
  const manual = new ManualClock(0);
  const sleepOnly: Clock = { now: () => manual.now(), sleep: (ms, signal) => manual.sleep(ms, signal) };
  const fired = deadline(sleepOnly, 1000, 'run');
  const cleared = deadline(sleepOnly, 1000, 'run');
  cleared.clear();
  manual.advance(1000);
  await tick();
  assert.ok(fired.expired && isKubewardError(fired.signal.reason, 'E_TIMEOUT'));
  assert.equal(cleared.signal.aborted, false);
  assert.equal(cleared.expired, false);
});

test("after: the system clock's timer fires once, and a cancelled one never", async () => {
  const { systemClock } = await import('../../base/clock.ts');
  let fired = 0;
  let cancelled = 0;
  const stop = after(systemClock, 1, () => cancelled++);
  stop();
  stop();
  await new Promise<void>((resolve) =>
    after(systemClock, 5, () => {
      fired++;
      resolve();
    }),
  );
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(fired, 1);
  assert.equal(cancelled, 0);
});
