import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { endFirstByteWatch, noteFirstBytes, type FirstByteWatched } from './first-byte-watch.ts';

const timersOn = new WeakSet<TestContext>();

/** A connection as the watch sees it, recording the verdicts. */
function watched(t: TestContext, opts: { throws?: boolean } = {}): FirstByteWatched & { bytesToClient: number; upstreamClosed: boolean; verdicts: number } {
  if (!timersOn.has(t)) {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    timersOn.add(t);
  }
  return {
    watchingFirstByte: true,
    firstByteTimer: undefined,
    firstByteTimeoutMs: 100,
    bytesToClient: 0,
    upstreamClosed: false,
    verdicts: 0,
    noAnswer() {
      this.verdicts++;
      if (opts.throws) throw new Error('owner fault');
    },
  };
}

test('the client speaks and the upstream stays silent: one verdict at the timeout, and the watch ends', (t) => {
  const c = watched(t);
  noteFirstBytes(c, true);
  noteFirstBytes(c, true); // a second chunk does not arm a second timer
  t.mock.timers.tick(99);
  assert.equal(c.verdicts, 0);
  t.mock.timers.tick(1);
  assert.equal(c.verdicts, 1);
  assert.equal(c.watchingFirstByte, false);
  t.mock.timers.tick(1000);
  assert.equal(c.verdicts, 1);
});

test('an answer from the upstream before the timeout ends the watch without a verdict', (t) => {
  const c = watched(t);
  noteFirstBytes(c, true);
  c.bytesToClient = 5;
  noteFirstBytes(c, false);
  assert.equal(c.watchingFirstByte, false);
  t.mock.timers.tick(1000);
  assert.equal(c.verdicts, 0);
});

test('an upstream that spoke first (a server greeting) ends the watch at the client bytes, no timer', (t) => {
  const c = watched(t);
  c.bytesToClient = 3;
  noteFirstBytes(c, true);
  assert.equal(c.watchingFirstByte, false);
  assert.equal(c.firstByteTimer, undefined);
});

test('no verdict when the upstream leg closed or the bytes came in the meantime, nor after the watch ended', (t) => {
  const closed = watched(t);
  noteFirstBytes(closed, true);
  closed.upstreamClosed = true;
  const answered = watched(t);
  noteFirstBytes(answered, true);
  answered.bytesToClient = 1;
  const ended = watched(t);
  noteFirstBytes(ended, true);
  endFirstByteWatch(ended);
  t.mock.timers.tick(100);
  assert.deepEqual([closed.verdicts, answered.verdicts, ended.verdicts], [0, 0, 0]);
});

test('an owner whose verdict throws does not escape the timer (it would be an uncaught exception)', (t) => {
  const c = watched(t, { throws: true });
  noteFirstBytes(c, true);
  assert.doesNotThrow(() => t.mock.timers.tick(100));
  assert.equal(c.verdicts, 1);
});
