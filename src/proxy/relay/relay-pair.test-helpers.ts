// What the relay tests of both data paths (handle-relay.test.ts, native-relay.test.ts) start from:
// a real client accepted as a bare handle and a bare handle connected to a real upstream on
// loopback, not yet relayed; an owner whose callbacks throw; and the exchange both tests run over
// a connection with a first-byte timeout.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { TestContext } from 'node:test';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { takeAccepts, type AcceptedHandle } from '../adopt-socket.ts';
import { connectHandle } from './handle-connect.ts';
import { loadRelayInternals, type RelayInternals, type TcpHandle } from './handle-internals.ts';
import type { RelayedConnection, RelayOwner } from './relayed-connection.ts';

export interface ConnectedHandles {
  internals: RelayInternals;
  client: Socket;
  /** The front's accepted handle of `client`. */
  clientHandle: TcpHandle;
  /** A handle connected to the upstream server. */
  upstreamHandle: TcpHandle;
  /** The upstream server's socket of upstreamHandle, once it was accepted. */
  upstreamSide: () => Promise<Socket>;
}

/** allowHalfOpen: the client and the upstream's socket stay open for writing after the peer's FIN. */
export async function connectedHandles(t: TestContext, { allowHalfOpen = false } = {}): Promise<ConnectedHandles> {
  const internals = loadRelayInternals() as RelayInternals;
  assert.ok(!('unusable' in internals));
  // Resolved by the events themselves: no polling (the test runner's timeout bounds the wait).
  const { promise: upstreamSide, resolve: upstreamAccepted } = Promise.withResolvers<Socket>();
  const upstream = createServer({ allowHalfOpen }, (s) => {
    s.on('error', () => {});
    upstreamAccepted(s);
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  t.after(() => upstream.close());
  const front = createServer({ pauseOnConnect: true });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  t.after(() => front.close());
  const { promise: accepted, resolve: frontAccepted } = Promise.withResolvers<AcceptedHandle>();
  takeAccepts(front, { noDelay: true, keepAliveSeconds: 15 }, frontAccepted);
  const client = connect({ host: '127.0.0.1', port: (front.address() as AddressInfo).port, allowHalfOpen });
  client.on('error', () => {});
  t.after(() => client.destroy());
  const clientHandle = (await accepted) as TcpHandle;
  const out = await connectHandle(internals, '127.0.0.1', (upstream.address() as AddressInfo).port, 2000);
  assert.ok(out.ok);
  return {
    internals,
    client,
    clientHandle,
    upstreamHandle: out.handle,
    upstreamSide: () => upstreamSide,
  };
}

/** An owner whose callbacks count their calls and then throw: no such throw may escape a loop callback. */
export function throwingOwner(): { owner: RelayOwner; calls: { noAnswer: number; closed: number }; noAnswered: Promise<void> } {
  const calls = { noAnswer: 0, closed: 0 };
  const { promise: noAnswered, resolve } = Promise.withResolvers<void>();
  const owner = {
    noAnswer: () => {
      calls.noAnswer++;
      resolve();
      throw new Error('owner fault: noAnswer');
    },
    connectionClosed: () => {
      calls.closed++;
      throw new Error('owner fault: connectionClosed');
    },
  };
  return { owner, calls, noAnswered };
}

/**
 * The client says hello, the upstream stays silent past the first-byte timeout (the owner hears
 * noAnswer once, and throws), then answers hi: the bytes arrive and the connection counts them.
 * `afterHello` runs once the hello has arrived upstream. Returns the upstream's socket.
 */
export async function helloSilenceHi(
  pair: { client: Socket; conn: RelayedConnection; upstreamSide: () => Promise<Socket> },
  noAnswered: Promise<void>,
  afterHello: () => void = () => {},
): Promise<Socket> {
  const { client, conn } = pair;
  client.write('hello');
  const upstreamSide = await pair.upstreamSide();
  const [first] = (await once(upstreamSide, 'data')) as [Buffer];
  assert.equal(first.toString(), 'hello');
  afterHello();
  await noAnswered;
  assert.equal(conn.bytesToUpstream, 5);
  assert.equal(conn.bytesToClient, 0);
  upstreamSide.write('hi');
  const [back] = (await once(client, 'data')) as [Buffer];
  assert.equal(back.toString(), 'hi');
  assert.equal(conn.bytesToClient, 2);
  assert.equal(conn.ended, false);
  return upstreamSide;
}
