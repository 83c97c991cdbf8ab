// HandleConnection on real loopback handles, with an owner whose callbacks throw: the daemon must
// not go down from a throw in a handle, request or timer callback (node:test fails the run on an
// uncaught exception).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { waitFor } from '../../testkit/wait-for.ts';
import { takeAccepts, type AcceptedHandle } from './adopt-socket.ts';
import { connectHandle } from './handle-connect.ts';
import { loadRelayInternals, type RelayInternals, type TcpHandle } from './handle-internals.ts';
import { HandleConnection } from './handle-relay.ts';

test('owner callbacks that throw (no answer, closed) do not escape, and the bytes are counted by the connection', async (t) => {
  const internals = loadRelayInternals() as RelayInternals;
  assert.ok(!('unusable' in internals));
  let upstreamSide: Socket | undefined;
  const upstream = createServer((s) => {
    upstreamSide = s;
    s.on('error', () => {});
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  t.after(() => upstream.close());
  const front = createServer({ pauseOnConnect: true });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  t.after(() => front.close());
  const accepted: AcceptedHandle[] = [];
  takeAccepts(front, { noDelay: true, keepAliveSeconds: 15 }, (h) => accepted.push(h));
  const client = connect({ host: '127.0.0.1', port: (front.address() as AddressInfo).port });
  client.on('error', () => {});
  t.after(() => client.destroy());
  await waitFor(() => accepted.length === 1, { what: 'the accepted handle' });
  const out = await connectHandle(internals, '127.0.0.1', (upstream.address() as AddressInfo).port, 2000);
  assert.ok(out.ok);
  const calls = { noAnswer: 0, closed: 0 };
  const owner = {
    noAnswer: () => {
      calls.noAnswer++;
      throw new Error('owner fault: noAnswer');
    },
    connectionClosed: () => {
      calls.closed++;
      throw new Error('owner fault: connectionClosed');
    },
  };
  const conn = new HandleConnection(internals, accepted[0] as TcpHandle, out.handle, 'k', owner, {
    idleTimeoutMs: 0,
    startedAt: 0,
    firstByteTimeoutMs: 50,
    clientSlice: Buffer.alloc(1024),
    upstreamSlice: Buffer.alloc(1024),
  });
  client.write('hello');
  await waitFor(() => upstreamSide, { what: 'the upstream side' });
  const [first] = (await once(upstreamSide!, 'data')) as [Buffer];
  assert.equal(first.toString(), 'hello');
  await waitFor(() => calls.noAnswer === 1, { what: 'the first-byte timeout' });
  assert.equal(conn.bytesToUpstream, 5);
  assert.equal(conn.bytesToClient, 0);
  upstreamSide!.write('hi');
  const [back] = (await once(client, 'data')) as [Buffer];
  assert.equal(back.toString(), 'hi');
  assert.equal(conn.bytesToClient, 2);
  assert.equal(conn.ended, false);
  client.destroy();
  await waitFor(() => calls.closed === 1, { what: 'both legs closed' });
  assert.equal(conn.ended, true);
  assert.equal(calls.noAnswer, 1);
});
