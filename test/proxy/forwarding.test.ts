// Real sockets through the proxy: bytes intact both ways, half-close, idle timeout, least
// connections, IPv6, graceful shutdown; on every data path (--relay handle, socket and native).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { waitFor } from '../../testkit/wait-for.ts';
import { startProxy } from '../../src/proxy/start-proxy.ts';
import {
  RELAY_PATHS,
  TEST_NATIVE_RELAY,
  ensureNativeAddon,
  frontendConfig,
  listenPort,
  openGreeted,
  startTestProxy,
  startUpstreams,
  upstreamState,
  waitForState,
} from './proxy-fixtures.ts';

const sha = (b: Buffer | Buffer[]) =>
  createHash('sha256')
    .update(Array.isArray(b) ? Buffer.concat(b) : b)
    .digest('hex');

function readAll(s: Socket, first?: Buffer): Promise<Buffer> {
  const chunks: Buffer[] = first ? [first] : [];
  s.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve, reject) => {
    s.once('end', () => resolve(Buffer.concat(chunks)));
    s.once('error', reject);
  });
}

for (const relay of RELAY_PATHS) {
  test(`large transfers arrive byte for byte in both directions at once (${relay} path)`, async (t) => {
    const [up] = await startUpstreams(t, ['a']);
    up!.greet = false;
    const fromUpstream = randomBytes(24 << 20);
    let receivedByUpstream: Promise<Buffer> | undefined;
    // Health checks connect too and reset at once: the data connection is the one that sends bytes.
    up!.onConnection = (s) => {
      s.once('data', (first: Buffer) => {
        receivedByUpstream = readAll(s, first).then((b) => {
          s.end();
          return b;
        });
      });
      s.write(fromUpstream);
    };
    const proxy = await startTestProxy(t, [frontendConfig([up!.address])], undefined, { relay });
    const fromClient = randomBytes(24 << 20);
    const client = connect({ host: '127.0.0.1', port: listenPort(proxy), allowHalfOpen: true });
    const received = readAll(client);
    client.end(fromClient);
    assert.equal(sha(await received), sha(fromUpstream), 'client got the upstream bytes intact');
    await waitFor(() => receivedByUpstream);
    assert.equal(sha(await receivedByUpstream!), sha(fromClient), 'upstream got the client bytes intact');
    const bytes = proxy.stats()[0]!.upstreams[0]!;
    assert.equal(bytes.bytesToUpstream, fromClient.length);
    assert.equal(bytes.bytesToClient, fromUpstream.length);
  });

  test(`a client that half-closes still receives the answer sent after its FIN (${relay} path)`, async (t) => {
    const [up] = await startUpstreams(t, ['a']);
    up!.greet = false;
    up!.onConnection = (s) => {
      // readAll resolves on the client's FIN: the answer is written only after it arrived.
      readAll(s).then(
        (req) => s.end(`answer to ${req.toString()}`),
        () => {},
      );
    };
    const proxy = await startTestProxy(t, [frontendConfig([up!.address])], undefined, { relay });
    const client = connect({ host: '127.0.0.1', port: listenPort(proxy), allowHalfOpen: true });
    const answer = readAll(client);
    client.end('question');
    assert.equal((await answer).toString(), 'answer to question');
  });

  test(`an upstream that half-closes still receives what the client sends after its FIN (${relay} path)`, async (t) => {
    const [up] = await startUpstreams(t, ['a']);
    up!.greet = false;
    let late: Promise<Buffer> | undefined;
    up!.onConnection = (s) => {
      s.once('data', (first: Buffer) => (late = readAll(s, first)));
      s.end('bye from upstream');
    };
    const proxy = await startTestProxy(t, [frontendConfig([up!.address])], undefined, { relay });
    const client = connect({ host: '127.0.0.1', port: listenPort(proxy), allowHalfOpen: true });
    assert.equal((await readAll(client)).toString(), 'bye from upstream');
    assert.equal(client.destroyed, false, 'the client side is still open for writing');
    client.end('late data');
    await waitFor(() => late);
    assert.equal((await late!).toString(), 'late data');
  });

  test(`an idle connection is closed after idleTimeout, a chatty one is not (${relay} path)`, async (t) => {
    const [up] = await startUpstreams(t, ['a']);
    up!.onConnection = (s) => s.on('data', (d) => s.write(d));
    const proxy = await startTestProxy(t, [frontendConfig([up!.address], { idleTimeoutMs: 300 })], undefined, { relay });
    const quiet = await openGreeted(listenPort(proxy));
    const chatty = await openGreeted(listenPort(proxy));
    const started = performance.now();
    const quietClosed = new Promise<number>((r) => quiet.socket.once('close', () => r(performance.now() - started)));
    let chattyClosed = false;
    chatty.socket.once('close', () => (chattyClosed = true));
    chatty.socket.on('error', () => {});
    for (let i = 0; i < 10; i++) {
      chatty.socket.write('x');
      await new Promise((r) => setTimeout(r, 100));
    }
    const quietMs = await quietClosed;
    assert.ok(quietMs >= 250 && quietMs < 1000, `quiet connection closed after ${quietMs} ms`);
    assert.equal(chattyClosed, false, 'a connection with traffic every 100 ms outlived 1 s');
    chatty.socket.destroy();
  });

  test(`connections spread by least connections and new ones fill the emptiest upstream (${relay} path)`, async (t) => {
    const ups = await startUpstreams(t, ['a', 'b', 'c']);
    const proxy = await startTestProxy(t, [frontendConfig(ups.map((u) => u.address))], undefined, { relay });
    for (const u of ups) await waitForState(proxy, u.address, 'up');
    const conns = await Promise.all(Array.from({ length: 30 }, () => openGreeted(listenPort(proxy))));
    t.after(() => conns.forEach((c) => c.socket.destroy()));
    const count = (name: string) => conns.filter((c) => c.upstream === name && !c.socket.destroyed).length;
    assert.deepEqual(['a', 'b', 'c'].map(count), [10, 10, 10]);
    const onA = conns.filter((c) => c.upstream === 'a').slice(0, 6);
    for (const c of onA) c.socket.destroy();
    await waitFor(() => upstreamState(proxy, ups[0]!.address).active === 4, { what: 'a down to 4 connections' });
    const more = await Promise.all(Array.from({ length: 6 }, () => openGreeted(listenPort(proxy))));
    t.after(() => more.forEach((c) => c.socket.destroy()));
    assert.deepEqual(
      more.map((c) => c.upstream),
      ['a', 'a', 'a', 'a', 'a', 'a'],
    );
  });

  test(`the proxy listens and forwards on IPv6 loopback (${relay} path)`, async (t) => {
    const ups = await startUpstreams(t, ['v6'], '::1');
    const proxy = await startTestProxy(t, [frontendConfig([ups[0]!.address], { listen: [{ host: '::1', port: 0 }] })], undefined, { relay });
    await waitForState(proxy, ups[0]!.address, 'up');
    const c = await openGreeted(listenPort(proxy), '::1');
    c.socket.destroy();
    assert.equal(c.upstream, 'v6');
    assert.equal(proxy.status().frontends[0]!.upstreams[0]!.upstream, `[::1]:${ups[0]!.address.port}`);
    assert.deepEqual(proxy.status().frontends[0]!.listen, [`[::1]:${listenPort(proxy)}`]);
  });

  test(`shutdown stops accepting at once, lets connections finish within the grace, then closes the rest (${relay} path)`, async (t) => {
    const [up] = await startUpstreams(t, ['a']);
    up!.onConnection = (s) => s.on('data', (d) => s.write(d));
    const proxy = await startTestProxy(t, [frontendConfig([up!.address])], 800, { relay });
    const port = listenPort(proxy);
    const finishing = await openGreeted(port);
    const lingering = await openGreeted(port);
    const started = performance.now();
    const closing = proxy.close();
    const refused = await new Promise<string>((resolve) => {
      const s = connect({ host: '127.0.0.1', port });
      s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
      s.on('connect', () => resolve('connected'));
    });
    assert.equal(refused, 'ECONNREFUSED', 'no new connections during shutdown');
    const echoed = new Promise<string>((r) => finishing.socket.once('data', (d) => r(d.toString())));
    finishing.socket.write('still served');
    assert.equal(await echoed, 'still served');
    finishing.socket.end();
    const lingeringClosed = new Promise<number>((r) => lingering.socket.once('close', () => r(performance.now() - started)));
    await closing;
    const ms = await lingeringClosed;
    assert.ok(ms >= 700 && ms < 2000, `the last connection was closed at the end of the 800 ms grace (${Math.round(ms)} ms)`);
  });

  test(`with reusePort two proxies share one listen address and both forward (${relay} path)`, async (t) => {
    const ups = await startUpstreams(t, ['a']);
    if (relay === 'native') await ensureNativeAddon();
    const opts = { reusePort: true, relay, nativeRelay: TEST_NATIVE_RELAY };
    // The first proxy binds port 0; the second joins the port it got.
    const one = await startProxy({ frontends: [frontendConfig([ups[0]!.address], { listen: [{ host: '127.0.0.1', port: 0 }] })], shutdownGraceMs: 100 }, opts);
    t.after(() => one.destroy());
    const port = listenPort(one);
    const fc = frontendConfig([ups[0]!.address], { listen: [{ host: '127.0.0.1', port }] });
    const two = await startProxy({ frontends: [fc], shutdownGraceMs: 100 }, opts);
    t.after(() => two.destroy());
    assert.deepEqual([one.relayPath, two.relayPath], [relay, relay], 'both run the path asked for');
    const conns = await Promise.all(Array.from({ length: 40 }, () => openGreeted(port)));
    conns.forEach((c) => c.socket.destroy());
    const [n1, n2] = [one.stats()[0]!.accepted, two.stats()[0]!.accepted];
    assert.equal(n1 + n2, 40);
    assert.ok(n1 > 0 && n2 > 0, `the kernel spread the connections: ${n1} and ${n2}`);
  });
}
