import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionSet, sweepPeriodMs } from './connection-set.ts';
import type { RelayedConnection } from './relay/relayed-connection.ts';

/** What the sweep and the set touch of a connection. */
function fakeConn(key: string, idleTimeoutMs: number) {
  const c = {
    upstreamKey: key,
    idleTimeoutMs,
    active: true,
    quietMs: 0,
    startedAt: 0,
    destroyed: 0,
    bytesToUpstream: 0,
    bytesToClient: 0,
    destroy: () => void c.destroyed++,
  };
  return c;
}

test('the idle sweep closes a connection once it moved no byte for its idle timeout, and activity starts the count again', (t) => {
  const set = new ConnectionSet();
  t.after(() => set.destroyAll());
  const quiet = fakeConn('a', 300);
  const chatty = fakeConn('a', 300);
  const never = fakeConn('b', 0);
  for (const c of [quiet, chatty, never]) set.add(c as unknown as RelayedConnection);
  set.sweepIdle(100); // clears the "active" each starts with
  for (let i = 0; i < 3; i++) {
    chatty.active = true; // a chunk in each period
    set.sweepIdle(100);
  }
  assert.equal(quiet.destroyed, 1, 'quiet for 300 ms: closed');
  assert.equal(chatty.destroyed, 0);
  set.sweepIdle(100);
  set.sweepIdle(100);
  assert.equal(chatty.destroyed, 0, '200 ms quiet is under its timeout');
  set.sweepIdle(100);
  assert.equal(chatty.destroyed, 1);
  for (let i = 0; i < 20; i++) set.sweepIdle(1000);
  assert.equal(never.destroyed, 0, 'idle timeout 0: never closed');
});

test('the sweep period is an eighth of the idle timeout, between 10 ms and 1 s', () => {
  assert.equal(sweepPeriodMs(300), 37);
  assert.equal(sweepPeriodMs(40), 10);
  assert.equal(sweepPeriodMs(600_000), 1000);
});
