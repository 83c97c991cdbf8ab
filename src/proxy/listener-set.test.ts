import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadHandoverAddon, type HandoverAddon } from '../handover/handover-addon.ts';
import type { ListenerHandover } from '../handover/handover-session.ts';
import { ListenerSet } from './listener-set.ts';

const addon = loadHandoverAddon();
const skip = 'unusable' in addon ? `no native addon (${addon.unusable}): node scripts/build-native.ts` : false;

/** A second descriptor of `server`'s listening socket, passed over a unix socket as the hand-over passes it. */
async function passedDescriptor(a: HandoverAddon, server: Server): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'kw-ls-'));
  const path = join(dir, 's');
  const sent = Promise.withResolvers<void>();
  const unix = createServer((s: Socket) => {
    const fd = (s as unknown as { _handle: { fd: number } })._handle.fd;
    const listening = (server as unknown as { _handle: { fd: number } })._handle.fd;
    a.handoverSend(fd, Buffer.from('x'), [listening]);
    sent.resolve();
  });
  await new Promise<void>((r) => unix.listen(path, r));
  const client = a.handoverConnect(path);
  assert.ok(client >= 0);
  await sent.promise;
  const got = a.handoverReceive(client, 16, 2000);
  a.handoverClose(client);
  await new Promise<void>((r) => unix.close(() => r()));
  await rm(dir, { recursive: true, force: true });
  assert.ok(Array.isArray(got), `received: ${String(got)}`);
  return got[1][0]!;
}

test('a ListenerSet given a handed-over socket accepts on it without binding, offers it on, and withdraws it on close', { skip }, async () => {
  const a = addon as HandoverAddon;
  // The predecessor's listener, on a port the kernel picked.
  const old = createServer();
  await new Promise<void>((r) => old.listen(0, '127.0.0.1', r));
  const port = (old.address() as AddressInfo).port;
  const key = `127.0.0.1:${port}`;
  const fd = await passedDescriptor(a, old);
  const offered = new Map<string, Server>();
  const adopted: string[] = [];
  const handover: ListenerHandover = {
    take: (k) => (k === key ? fd : undefined),
    adopted: (k) => void adopted.push(k),
    offer: (k, s) => void offered.set(k, s),
    withdraw: (k, s) => void (offered.get(k) === s && offered.delete(k)),
  };
  let accepted = 0;
  const set = new ListenerSet({ name: 'test', onConnection: (h) => (accepted++, h.close()), onError: () => undefined, handover });
  await set.open([{ host: '127.0.0.1', port }]);
  assert.deepEqual(adopted, [key], 'listening on the inherited socket, not bound anew (a bind would be EADDRINUSE)');
  assert.ok(offered.has(key), 'offered on to a successor');
  // The predecessor stops accepting: every connection now reaches the set.
  await new Promise<void>((r) => old.close(() => r()));
  for (let i = 0; i < 3; i++) {
    const c = connect(port, '127.0.0.1');
    c.on('error', () => undefined);
    await new Promise<void>((r) => c.once('close', () => r()).once('connect', () => c.resume()));
  }
  assert.equal(accepted, 3);
  await set.closeAll();
  assert.equal(offered.size, 0, 'withdrawn once closed');
});
