// HandleConnection on real loopback handles: an owner whose callbacks throw must not take the daemon
// down (a throw in a handle, request or timer callback is uncaught, and node:test fails the run on
// it), and the spare WriteWrap is reused only by writes that completed at once.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { waitFor } from '../../../testkit/wait-for.ts';
import { HandleConnection } from './handle-relay.ts';
import type { RelayOwner } from './relayed-connection.ts';
import { connectedHandles, helloSilenceHi, throwingOwner } from './relay-pair.test-helpers.ts';

/** A HandleConnection between a real client and a real upstream on loopback, with `owner`. */
async function relayPair(t: TestContext, owner: RelayOwner, firstByteTimeoutMs = 0) {
  const { internals, client, clientHandle, upstreamHandle, upstreamSide } = await connectedHandles(t);
  const conn = new HandleConnection(internals, clientHandle, upstreamHandle, 'k', owner, {
    idleTimeoutMs: 0,
    startedAt: 0,
    firstByteTimeoutMs,
    clientSlice: Buffer.alloc(1024),
    upstreamSlice: Buffer.alloc(1024),
  });
  return { internals, client, conn, upstreamSide };
}

test('owner callbacks that throw (no answer, closed) do not escape, and the bytes are counted by the connection', async (t) => {
  const { owner, calls, noAnswered } = throwingOwner();
  const pair = await relayPair(t, owner, 50);
  const { internals, client, conn } = pair;
  const spare = internals.spareWrite;
  await helloSilenceHi(pair, noAnswered, () =>
    assert.equal(internals.spareWrite, spare, 'a write the kernel took at once leaves the spare WriteWrap free for the next'),
  );
  client.destroy();
  await waitFor(() => calls.closed === 1, { what: 'both legs closed' });
  assert.equal(conn.ended, true);
  assert.equal(calls.noAnswer, 1);
});

test('a write that goes async keeps its WriteWrap and a new spare serves the next; every byte arrives in order', async (t) => {
  let closed = 0;
  const { internals, client, upstreamSide: side } = await relayPair(t, { noAnswer: () => {}, connectionClosed: () => void closed++ });
  client.pause();
  client.write('go');
  const upstreamSide = await side();
  const spare = internals.spareWrite;
  // More than the socket buffers hold while the client does not read: the relay's writes to it queue.
  const payload = randomBytes(8 << 20);
  upstreamSide.end(payload);
  await waitFor(() => internals.spareWrite !== spare, { what: 'a write that went async' });
  const chunks: Buffer[] = [];
  client.on('data', (c: Buffer) => chunks.push(c));
  client.resume();
  await once(client, 'end');
  assert.ok(Buffer.concat(chunks).equals(payload));
  client.end();
  await waitFor(() => closed === 1, { what: 'both legs closed' });
});
