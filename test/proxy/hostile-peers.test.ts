// Hostile peers on the data path, real loopback TCP through the proxy: fast-check draws a schedule
// of writes (1 byte to 4 MiB, and floods of 12-16 MiB at a stalled reader), FINs, resets and stalled
// readers from both sides. Whatever the schedule, the process stays up, each side receives a prefix
// of what the other sent, in order and intact (all of it when nobody reset), every connection is
// closed in the proxy, and the process holds as many file descriptors afterwards as before. Runs on
// the native path (the C pump) and on the handle path it must behave like.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import fc from 'fast-check';
import { waitFor } from '../../testkit/wait-for.ts';
import type { RelayPath } from '../../src/proxy/relay/relay.ts';
import { frontendConfig, listenPort, startTestProxy, startUpstreams } from './proxy-fixtures.ts';

type Side = 'client' | 'upstream';
type Step =
  | { side: Side; op: 'write'; bytes: number; seed: number }
  | { side: Side; op: 'end' }
  | { side: Side; op: 'reset' }
  | { side: Side; op: 'stall' }
  | { side: Side; op: 'resume' }
  | { side: Side; op: 'flood'; bytes: number; seed: number }
  | { op: 'yield'; turns: number };

const side = fc.constantFrom<Side>('client', 'upstream');
// Small chunks, one read's worth, and floods larger than loopback's socket buffers (the proxy's
// writes then fall short and it holds a residue while a reader is stalled).
const writeSize = fc.oneof(fc.integer({ min: 1, max: 1024 }), fc.integer({ min: 1025, max: 64 * 1024 }), fc.integer({ min: 64 * 1024, max: 4 << 20 }));
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ side, op: fc.constant('write' as const), bytes: writeSize, seed: fc.nat(255) }) },
  { weight: 1, arbitrary: fc.record({ side, op: fc.constant('end' as const) }) },
  { weight: 1, arbitrary: fc.record({ side, op: fc.constant('reset' as const) }) },
  { weight: 1, arbitrary: fc.record({ side, op: fc.constant('stall' as const) }) },
  { weight: 1, arbitrary: fc.record({ side, op: fc.constant('resume' as const) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('yield' as const), turns: fc.integer({ min: 1, max: 5 }) }) },
  // More than loopback's socket buffers hold while the other side does not read: the proxy's
  // writes fall short and it holds a residue (backpressure) until the reader resumes.
  { weight: 1, arbitrary: fc.record({ side, op: fc.constant('flood' as const), bytes: fc.integer({ min: 12 << 20, max: 16 << 20 }), seed: fc.nat(255) }) },
);

/** One end of the relayed connection, with what it sent and received. */
class Peer {
  readonly sent: Buffer[] = [];
  readonly received: Buffer[] = [];
  ended = false; // we sent FIN
  reset = false; // we reset
  gotEnd = false; // the peer's FIN (or a close) arrived
  closed = false;
  readonly socket: Socket;
  constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (c: Buffer) => this.received.push(c));
    socket.on('end', () => (this.gotEnd = true));
    socket.on('close', () => {
      this.closed = true;
      this.gotEnd = true;
    });
    socket.on('error', () => {});
  }
  get usable(): boolean {
    return !this.ended && !this.reset && !this.socket.destroyed;
  }
}

const fdCount = (): number => readdirSync('/proc/self/fd').length;
const isPrefix = (whole: Buffer, part: Buffer): boolean => part.length <= whole.length && whole.subarray(0, part.length).equals(part);

function pattern(bytes: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(bytes);
  for (let i = 0; i < bytes; i++) b[i] = (seed + i * 31) & 0xff;
  return b;
}

for (const relay of ['native', 'handle'] as const satisfies readonly RelayPath[]) {
  test(`random writes, FINs, resets and stalled readers from both sides: bytes intact and in order, every fd closed (${relay} path)`, async (t) => {
    const [up] = await startUpstreams(t, ['a']);
    up!.greet = false;
    let nextUpstream: ((s: Socket) => void) | undefined;
    // Health checks connect too and send nothing: the data connection is the one whose first byte arrives.
    up!.onConnection = (s) => s.once('data', (first: Buffer) => nextUpstream?.(Object.assign(s, { first })));
    const proxy = await startTestProxy(t, [frontendConfig([up!.address], {}, { intervalMs: 60_000 })], undefined, { relay });
    const open = () => proxy.status().frontends[0]!.connections.open ?? -1;
    const fdsBefore = fdCount();

    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const upstreamSide = new Promise<Socket & { first: Buffer }>((resolve) => (nextUpstream = resolve as (s: Socket) => void));
        const clientSocket = connect({ host: '127.0.0.1', port: listenPort(proxy), allowHalfOpen: true });
        const client = new Peer(clientSocket);
        const marker = Buffer.from('!');
        client.sent.push(marker);
        clientSocket.write(marker);
        const upSocket = await upstreamSide;
        const upstream = new Peer(upSocket);
        upstream.received.push(upSocket.first);
        const peers = { client, upstream };

        for (const s of steps) {
          if (s.op === 'yield') {
            for (let i = 0; i < s.turns; i++) await new Promise((r) => setImmediate(r));
            continue;
          }
          const p = peers[s.side];
          if (!p.usable && s.op !== 'resume') continue;
          if (s.op === 'write' || s.op === 'flood') {
            const data = pattern(s.bytes, s.seed);
            p.sent.push(data);
            if (s.op === 'flood') peers[s.side === 'client' ? 'upstream' : 'client'].socket.pause();
            p.socket.write(data);
            if (s.op === 'flood') await new Promise((r) => setTimeout(r, 30));
          } else if (s.op === 'end') {
            p.ended = true;
            p.socket.end();
          } else if (s.op === 'reset') {
            p.reset = true;
            p.socket.resetAndDestroy();
          } else if (s.op === 'stall') {
            p.socket.pause();
          } else {
            p.socket.resume();
          }
        }
        for (const p of [client, upstream]) p.socket.resume();
        const anyReset = client.reset || upstream.reset;
        if (!anyReset) {
          for (const p of [client, upstream]) if (p.usable) p.socket.end();
          await waitFor(() => client.gotEnd && upstream.gotEnd, { timeoutMs: 20_000, what: 'both FINs through the proxy' });
        } else {
          // The proxy closes the other leg: its peer sees a FIN or a reset.
          await waitFor(() => (client.reset || client.gotEnd) && (upstream.reset || upstream.gotEnd), { timeoutMs: 20_000, what: 'the other leg closed' });
        }
        await waitFor(() => open() === 0, { timeoutMs: 20_000, what: 'the connection closed in the proxy' });
        const sentBy = (p: Peer) => Buffer.concat(p.sent);
        const got = (p: Peer) => Buffer.concat(p.received);
        if (anyReset) {
          assert.ok(isPrefix(sentBy(client), got(upstream)), 'the upstream got a prefix of what the client sent');
          assert.ok(isPrefix(sentBy(upstream), got(client)), 'the client got a prefix of what the upstream sent');
        } else {
          assert.ok(got(upstream).equals(sentBy(client)), `the upstream got all ${sentBy(client).length} bytes the client sent, in order`);
          assert.ok(got(client).equals(sentBy(upstream)), `the client got all ${sentBy(upstream).length} bytes the upstream sent, in order`);
        }
        for (const p of [client, upstream]) p.socket.destroy();
        await waitFor(() => client.closed && upstream.closed, { what: 'both test sockets closed' });
      }),
      { numRuns: 40 },
    );
    await waitFor(() => fdCount() === fdsBefore, { timeoutMs: 10_000, what: `the process back to ${fdsBefore} fds (now ${fdCount()})` });
  });
}

test('300 connections opened at once through the native path, each a round trip, then closed: none left open, every fd back', async (t) => {
  const [up] = await startUpstreams(t, ['a']);
  up!.greet = false;
  up!.onConnection = (s) => {
    s.on('data', (d: Buffer) => s.write(d));
    s.on('end', () => s.end());
  };
  const proxy = await startTestProxy(t, [frontendConfig([up!.address], {}, { intervalMs: 60_000 })], undefined, { relay: 'native' });
  const open = () => proxy.status().frontends[0]!.connections.open ?? -1;
  const fdsBefore = fdCount();
  const echoed = await Promise.all(
    Array.from(
      { length: 300 },
      (_, i) =>
        new Promise<string>((resolve, reject) => {
          const s = connect({ host: '127.0.0.1', port: listenPort(proxy) }, () => s.write(`conn ${i}`));
          s.once('data', (d: Buffer) => {
            resolve(d.toString());
            // Half of them end with a FIN, half with a reset.
            if (i % 2 === 0) s.end();
            else s.resetAndDestroy();
          });
          s.on('error', reject);
        }),
    ),
  );
  echoed.forEach((e, i) => assert.equal(e, `conn ${i}`));
  await waitFor(() => open() === 0, { timeoutMs: 20_000, what: 'every connection closed in the proxy' });
  await waitFor(() => fdCount() <= fdsBefore, { timeoutMs: 10_000, what: `the process back to ${fdsBefore} fds (now ${fdCount()})` });
});
