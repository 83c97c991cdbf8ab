// The data path's edge cases on every path (--relay handle, socket and native), against real
// loopback TCP: a client that does not read (backpressure, bounded), resets from either side,
// connect refused and connect timeout; the fallback to the socket path when Node's internals do not
// fit, and to the handle path when the native addon is missing.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { waitFor } from '../../testkit/wait-for.ts';
import { createLogger } from '../../src/base/logger.ts';
import { loadRelayInternals } from '../../src/proxy/relay/handle-internals.ts';
import type { RelayPath } from '../../src/proxy/relay/relay.ts';
import { addonCandidates, NativeRelay } from '../../src/proxy/relay/native-relay.ts';
import { startProxy, type StartProxyOptions } from '../../src/proxy/start-proxy.ts';
import { RELAY_PATHS, frontendConfig, listenPort, startTestProxy, startUpstreams, type TcpUpstream } from './proxy-fixtures.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The upstream's side of the next connection that sends bytes (health checks connect too, and send nothing). */
function nextDataConnection(up: TcpUpstream): Promise<{ socket: Socket; first: Buffer }> {
  up.greet = false;
  return new Promise((resolve) => {
    up.onConnection = (s) => s.once('data', (first: Buffer) => resolve({ socket: s, first }));
  });
}

function closed(s: Socket): Promise<void> {
  return s.closed ? Promise.resolve() : once(s, 'close').then(() => undefined);
}

/** The peer's FIN or reset arrived (a half-open-capable socket does not close on a FIN alone). */
function ended(s: Socket): Promise<void> {
  if (s.closed || s.readableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    s.once('end', resolve);
    s.once('close', resolve);
  });
}

function openConnections(proxy: Awaited<ReturnType<typeof startTestProxy>>): number {
  return proxy.status().frontends[0]!.connections.open ?? -1;
}

/** A proxy on the relay path with one connection through it that has carried a first chunk ("hello") to the upstream. */
async function connectedPair(
  t: TestContext,
  relay: RelayPath,
): Promise<{ proxy: Awaited<ReturnType<typeof startTestProxy>>; client: Socket; upstream: Socket }> {
  const [up] = await startUpstreams(t, ['a']);
  const data = nextDataConnection(up!);
  const proxy = await startTestProxy(t, [frontendConfig([up!.address])], undefined, { relay });
  const client = connect({ host: '127.0.0.1', port: listenPort(proxy) });
  t.after(() => client.destroy());
  client.on('error', () => {});
  client.write('hello');
  const { socket: upstream, first } = await data;
  assert.equal(first.toString(), 'hello');
  return { proxy, client, upstream };
}

for (const relay of RELAY_PATHS) {
  test(`a client that does not read stops the upstream's bytes at the proxy, bounded, and gets them all once it reads (${relay} path)`, async (t) => {
    const [up] = await startUpstreams(t, ['a']);
    const data = nextDataConnection(up!);
    const proxy = await startTestProxy(t, [frontendConfig([up!.address])], undefined, { relay });
    const client = connect({ host: '127.0.0.1', port: listenPort(proxy) });
    t.after(() => client.destroy());
    client.pause();
    client.write('go');
    const { socket: upstream } = await data;
    const payload = randomBytes(48 << 20);
    upstream.end(payload);
    // The proxy reads until the client's receive buffer and its own send buffer are full, then stops:
    // the count of bytes it read settles well below the payload.
    const read = () => proxy.stats()[0]!.upstreams[0]!.bytesToClient;
    let last = -1;
    let steady = 0;
    await waitFor(
      () => {
        const now = read();
        steady = now === last && now > 0 ? steady + 1 : 0;
        last = now;
        return steady >= 10;
      },
      { timeoutMs: 20_000, intervalMs: 50, what: 'the bytes read from the upstream to settle' },
    );
    assert.ok(last < 32 << 20, `the proxy stopped reading after ${last} of ${payload.length} bytes`);
    assert.ok(upstream.writableLength > 0, 'the rest waits in the upstream, not in the proxy');
    const chunks: Buffer[] = [];
    client.on('data', (c: Buffer) => chunks.push(c));
    client.resume();
    await once(client, 'end');
    assert.equal(sha(Buffer.concat(chunks)), sha(payload), 'reading resumed and every byte arrived in order');
  });

  test(`a reset from the client closes the upstream leg (${relay} path)`, async (t) => {
    const { proxy, client, upstream } = await connectedPair(t, relay);
    client.resetAndDestroy();
    await ended(upstream);
    await waitFor(() => openConnections(proxy) === 0, { what: 'no open connection' });
  });

  test(`a reset from the upstream closes the client leg (${relay} path)`, async (t) => {
    const { proxy, client, upstream } = await connectedPair(t, relay);
    upstream.resetAndDestroy();
    await closed(client);
    await waitFor(() => openConnections(proxy) === 0, { what: 'no open connection' });
  });

  test(`an upstream that refuses is retried on the next, and a client with none left is closed (${relay} path)`, async (t) => {
    const ups = await startUpstreams(t, ['gone', 'b']);
    await ups[0]!.close(); // its port now refuses
    const data = nextDataConnection(ups[1]!);
    // Before the checks mark it down, a pick of the refusing one is retried on b.
    const fc = frontendConfig(ups.map((u) => u.address));
    const proxy = await startTestProxy(t, [fc], undefined, { relay });
    for (let i = 0; i < 4; i++) {
      const client = connect({ host: '127.0.0.1', port: listenPort(proxy) });
      t.after(() => client.destroy());
      client.write(`c${i}`);
      if (i === 0) await data;
    }
    await waitFor(() => proxy.stats()[0]!.upstreams.find((u) => u.upstream.endsWith(`:${ups[1]!.address.port}`))!.total === 4, {
      what: 'all four clients forwarded to b',
    });
    assert.equal(proxy.stats()[0]!.failed, 0);

    const alone = await startTestProxy(t, [frontendConfig([ups[0]!.address])], undefined, { relay });
    const client = connect({ host: '127.0.0.1', port: listenPort(alone) });
    client.on('error', () => {});
    await closed(client);
    assert.equal(alone.stats()[0]!.failed, 1, 'counted as a client failure');
    await waitFor(() => openConnections(alone) === 0, { what: 'the refused client uncounted' });
  });

  test(`an upstream whose handshake never completes times out within connectTimeout (${relay} path)`, async (t) => {
    const port = await stalledListener(t);
    const proxy = await startTestProxy(t, [frontendConfig([{ host: '127.0.0.1', port }], { connectTimeoutMs: 300 })], undefined, { relay });
    const started = performance.now();
    const client = connect({ host: '127.0.0.1', port: listenPort(proxy) });
    client.on('error', () => {});
    await closed(client);
    const ms = performance.now() - started;
    assert.ok(ms >= 250, `closed after the connect timeout (${Math.round(ms)} ms)`);
    assert.equal(proxy.stats()[0]!.failed, 1);
    await waitFor(() => openConnections(proxy) === 0, { what: 'the client uncounted' });
  });
}

// A path that cannot run here falls back to the next, says why once, and reports the path that runs.
const FALLBACKS = [
  {
    name: 'without usable internals the proxy relays on net.Socket, says why once, and reports the socket path',
    runs: 'socket',
    reason: 'WriteWrap is missing (test)',
    opts: { loadRelayInternals: () => ({ unusable: 'WriteWrap is missing (test)' }) },
  },
  {
    name: 'without the native addon --relay native relays on the handle path, says why once, and reports it',
    runs: 'handle',
    reason: 'no native relay addon at /nowhere (test)',
    opts: { relay: 'native', nativeRelay: { load: () => ({ unusable: 'no native relay addon at /nowhere (test)' }) } },
  },
] as const satisfies readonly { name: string; runs: RelayPath; reason: string; opts: StartProxyOptions }[];

for (const { name, runs, reason, opts } of FALLBACKS) {
  test(name, async (t) => {
    const [up] = await startUpstreams(t, ['a']);
    const lines: { msg: string; reason?: string; relay?: string }[] = [];
    const log = createLogger({ format: 'json', level: 'info', write: (l) => void lines.push(JSON.parse(l) as { msg: string }) });
    const proxy = await startProxy({ frontends: [frontendConfig([up!.address])], shutdownGraceMs: 1000 }, { log, ...opts });
    t.after(() => proxy.destroy());
    assert.equal(proxy.status().relay, runs);
    const fallbacks = lines.filter((l) => l.relay === runs);
    assert.equal(fallbacks.length, 1);
    assert.equal(fallbacks[0]!.reason, reason);
    const data = nextDataConnection(up!);
    const client = connect({ host: '127.0.0.1', port: listenPort(proxy) });
    t.after(() => client.destroy());
    client.write(`through the ${runs} path`);
    assert.equal((await data).first.toString(), `through the ${runs} path`);
  });
}

test('a connection the native addon refuses (EMFILE at dup) relays on the handle path; logged once for the frontend', async (t) => {
  const [up] = await startUpstreams(t, ['a']);
  const lines: { msg: string; reason?: string }[] = [];
  const log = createLogger({ format: 'json', level: 'info', write: (l) => void lines.push(JSON.parse(l) as { msg: string }) });
  let opens = 0;
  const refusing = {
    init: () => 408,
    open: () => (opens++, -24),
    destroy: () => {},
    moved: () => 0,
    active: () => false,
    unwatch: () => {},
    stats: (): [number, number] => [0, 0],
    trim: () => false,
  };
  const proxy = await startProxy(
    { frontends: [frontendConfig([up!.address])], shutdownGraceMs: 1000 },
    { log, relay: 'native', nativeRelay: { load: () => new NativeRelay(refusing, 64 * 1024, 'test') } },
  );
  t.after(() => proxy.destroy());
  assert.equal(proxy.status().relay, 'native');
  for (let i = 0; i < 3; i++) {
    const data = nextDataConnection(up!);
    const client = connect({ host: '127.0.0.1', port: listenPort(proxy) });
    t.after(() => client.destroy());
    client.write(`through the handle path ${i}`);
    assert.equal((await data).first.toString(), `through the handle path ${i}`);
  }
  assert.equal(opens, 3, 'the addon was asked each time');
  const refused = lines.filter((l) => /native data path refused/.test(l.msg));
  assert.equal(refused.length, 1, 'said once');
  assert.equal(refused[0]!.reason, 'the addon could not take the sockets (errno 24)');
});

test('a missing addon file is named, and the search looks next to the build before the sources', () => {
  const dist = addonCandidates(undefined, 'file:///opt/kubeward/dist/chunks/proxy-X.js');
  assert.equal(dist[0], '/opt/kubeward/dist/chunks/native/relay.node');
  assert.equal(dist[1], '/opt/kubeward/dist/native/relay.node');
  assert.deepEqual(addonCandidates('/tmp/asan/relay.node'), ['/tmp/asan/relay.node'], 'a named file alone');
});

test('the internals check names what is missing or unexpected, and accepts this Node', () => {
  const real = (name: string) => (process as unknown as { binding: (n: string) => Record<string, unknown> }).binding(name);
  assert.ok(!('unusable' in loadRelayInternals()), 'this Node has what the handle path needs');
  const without = (binding: string, key: string) => (name: string) => {
    const b = { ...real(name) };
    if (name === binding) delete b[key];
    return b;
  };
  assert.deepEqual(loadRelayInternals(without('stream_wrap', 'WriteWrap')), { unusable: 'WriteWrap is missing from process.binding' });
  assert.deepEqual(loadRelayInternals(without('tcp_wrap', 'TCPConnectWrap')), { unusable: 'TCPConnectWrap is missing from process.binding' });
  assert.deepEqual(loadRelayInternals(without('stream_wrap', 'kLastWriteWasAsync')), { unusable: "stream_wrap's state indexes are missing" });
  assert.deepEqual(loadRelayInternals(null), { unusable: 'process.binding is not available' });
  const throwing = loadRelayInternals(() => {
    throw new Error('No such module');
  });
  assert.match((throwing as { unusable: string }).unusable, /threw: No such module/);
});

/**
 * A listener whose accept queue is full and never drained (its process blocks its event loop right
 * after printing the port): the kernel drops further SYNs, so a connect to it neither succeeds nor
 * fails until it times out.
 */
async function stalledListener(t: TestContext): Promise<number> {
  // Pipes are written synchronously on Linux: the port is out before the loop blocks (30 s at most).
  const script = `const s=require('net').createServer().listen({host:'127.0.0.1',port:0,backlog:1},()=>{console.log(s.address().port);Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0,30000)})`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  const port = Number(line.toString().trim());
  // Fill the accept queue (backlog 1 holds two): the third filler's SYN and every later one are dropped.
  const fillers: Socket[] = [];
  let connected = 0;
  for (let i = 0; i < 3; i++) {
    const s = connect({ host: '127.0.0.1', port }, () => connected++);
    s.on('error', () => {});
    fillers.push(s);
  }
  t.after(() => fillers.forEach((s) => s.destroy()));
  await waitFor(() => connected >= 2, { what: 'the accept queue full' });
  return port;
}
