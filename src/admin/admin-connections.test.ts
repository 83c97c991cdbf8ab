import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import fc from 'fast-check';
import { AdminConnections, admitConnection } from './admin-connections.ts';

/** A socket as far as AdminConnections touches it. */
function fakeSocket(): Socket & { closed: boolean } {
  const listeners: (() => void)[] = [];
  const s = {
    closed: false,
    destroyed: false,
    once: (_: string, fn: () => void) => listeners.push(fn),
    destroy() {
      s.closed = s.destroyed = true;
      listeners.forEach((fn) => fn());
    },
  };
  return s as unknown as Socket & { closed: boolean };
}

test('property: under the cap every newcomer is admitted; at the cap the longest-idle one makes room, or the newcomer is refused when none is idle', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 32 }), fc.boolean(), (open, cap, someIdle) => {
      const idle = someIdle ? fakeSocket() : undefined;
      const v = admitConnection(open, cap, idle);
      if (open < cap) assert.deepEqual(v, { admit: true });
      else if (idle) assert.deepEqual(v, { admit: true, evict: idle });
      else assert.deepEqual(v, { admit: false });
    }),
  );
});

test('a busy connection is never displaced; the one idle longest goes first; a request moves a connection to the young end', () => {
  const set = new AdminConnections(3);
  const [a, b, c] = [fakeSocket(), fakeSocket(), fakeSocket()];
  for (const s of [a, b, c]) set.add(s);
  set.requestStarted(a);
  set.requestStarted(b);
  set.requestEnded(b); // b idle again, now younger than c
  const d = fakeSocket();
  set.add(d);
  assert.deepEqual([a.closed, b.closed, c.closed, d.closed], [false, false, true, false], 'c, idle longest, made room; busy a stays');
  set.requestStarted(b);
  set.requestStarted(d);
  const e = fakeSocket();
  set.add(e);
  assert.equal(e.closed, true, 'all three busy: the newcomer is refused');
  assert.equal(set.refused, 1);
  assert.equal(set.evicted, 1);
  assert.equal(set.open, 3);
});
