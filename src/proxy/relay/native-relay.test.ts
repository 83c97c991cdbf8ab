// NativeConnection on real loopback sockets with the C pump (native/relay.c): owner callbacks that
// throw do not escape (a throw in a loop callback would be uncaught); the addon's counters, idle
// flag and end reasons; a held residue while a reader stalls; the handles it took are closed and
// the process keeps no fd of a connection that ended.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import { waitFor } from '../../../testkit/wait-for.ts';
import { ensureNativeAddon, TEST_NATIVE_RELAY } from '../../../test/proxy/proxy-fixtures.ts';
import { NativeConnection, type NativeRelay } from './native-relay.ts';
import type { RelayOwner } from './relayed-connection.ts';
import { connectedHandles, helloSilenceHi, throwingOwner } from './relay-pair.test-helpers.ts';

const fdCount = (): number => readdirSync('/proc/self/fd').length;

/**
 * The peer's FIN or a reset arrived (a half-open-capable socket does not close on a FIN alone). The
 * socket is read to its end: 'end' waits for bytes the relay delivered before it closed.
 */
function ended(s: Socket): Promise<void> {
  if (s.closed || s.readableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    s.once('end', resolve);
    s.once('close', resolve);
    s.resume();
  });
}

async function relay(): Promise<NativeRelay> {
  await ensureNativeAddon();
  const r = TEST_NATIVE_RELAY.load(64 * 1024);
  assert.ok(!('unusable' in r), 'unusable' in r ? r.unusable : '');
  return r;
}

/** A NativeConnection between a real client and a real upstream on loopback, with `owner`. */
async function nativePair(t: TestContext, owner: RelayOwner, firstByteTimeoutMs = 0) {
  const native = await relay();
  const { client, clientHandle, upstreamHandle, upstreamSide } = await connectedHandles(t, { allowHalfOpen: true });
  const conn = native.open(clientHandle, upstreamHandle, 'k', owner, { idleTimeoutMs: 0, startedAt: 0, firstByteTimeoutMs });
  assert.ok(conn instanceof NativeConnection, String(conn));
  t.after(() => conn.destroy());
  return { native, client, conn, upstreamSide };
}

test('owner callbacks that throw (no answer, closed) do not escape; the addon counts bytes and the idle flag, and says why it ended', async (t) => {
  const { owner, calls, noAnswered } = throwingOwner();
  const pair = await nativePair(t, owner, 50);
  const { client, conn } = pair;
  assert.equal(conn.clientSlice, undefined, 'no read slice of the pool');
  conn.active = false;
  assert.equal(conn.active, false, 'the sweep cleared the flag');
  const upstreamSide = await helloSilenceHi(pair, noAnswered, () => assert.equal(conn.active, true, 'a chunk set it again'));
  client.end();
  await once(upstreamSide, 'end');
  upstreamSide.end();
  await waitFor(() => calls.closed === 1, { what: 'both sockets closed' });
  assert.equal(conn.ended, true);
  assert.equal(conn.endReason, 'eof', 'both FINs passed on');
  assert.deepEqual([conn.bytesToUpstream, conn.bytesToClient], [5, 2], 'the final counts, kept after the end');
  assert.equal(calls.noAnswer, 1);
});

test('destroy() ends a connection as destroyed, a reset as error; the process keeps no fd of either', async (t) => {
  // Counted once the relay is loaded: what loading opens is not a connection's.
  await relay();
  const fdsBefore = fdCount();
  let closed = 0;
  const owner = { noAnswer: () => {}, connectionClosed: () => void closed++ };
  const a = await nativePair(t, owner);
  a.client.write('x');
  const aUpstream = await a.upstreamSide();
  a.conn.destroy();
  a.conn.destroy();
  await waitFor(() => closed === 1, { what: 'the destroyed one closed' });
  assert.equal(a.conn.endReason, 'destroyed');
  await Promise.all([ended(a.client), ended(aUpstream)]);
  a.client.destroy();
  aUpstream.destroy();

  const b = await nativePair(t, owner);
  b.client.write('y');
  const upstreamSide = await b.upstreamSide();
  await once(upstreamSide, 'data');
  upstreamSide.resetAndDestroy();
  await waitFor(() => closed === 2, { what: 'the reset one closed' });
  assert.equal(b.conn.endReason, 'error');
  await ended(b.client);
  b.client.destroy();
  assert.equal(b.native.stats.open, 0, 'nothing open in C');
  // The test's own sockets are closed too: what is left over the start is its four listeners.
  await waitFor(() => fdCount() <= fdsBefore + 4, { what: `at most the test's four listeners more than ${fdsBefore} fds (now ${fdCount()})` });
});

test('a stalled reader: the pump holds at most one read as its residue and stops reading; every byte arrives once it reads', async (t) => {
  let closed = 0;
  const { native, client, conn, upstreamSide: side } = await nativePair(t, { noAnswer: () => {}, connectionClosed: () => void closed++ });
  client.pause();
  client.write('go');
  const upstreamSide = await side();
  const payload = randomBytes(24 << 20);
  upstreamSide.end(payload);
  await waitFor(() => native.stats.residueBytes > 0, { what: 'a residue held' });
  assert.ok(native.stats.residueBytes <= 64 * 1024, `at most one read held (${native.stats.residueBytes} bytes)`);
  const moved = conn.bytesToClient;
  assert.ok(moved < payload.length, 'the pump stopped reading the upstream');
  const chunks: Buffer[] = [];
  client.on('data', (c: Buffer) => chunks.push(c));
  client.resume();
  await once(client, 'end');
  assert.ok(Buffer.concat(chunks).equals(payload));
  assert.equal(native.stats.residueBytes, 0, 'no residue left');
  client.end();
  await waitFor(() => closed === 1, { what: 'both sockets closed' });
});
