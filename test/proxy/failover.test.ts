// Failover through the proxy with real TLS apiserver stand-ins: refused upstream retried, hung
// upstream taken out by the active check, graceful shutdown drained without failed requests,
// fail-open and recovery, and the jittered close of a dead upstream's connections.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { TestContext } from 'node:test';
import { createTestCa, type TestCa, type CertPair } from '../../testkit/certs.ts';
import { ApiserverStandin } from '../../testkit/apiserver-standin.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import type { FrontendConfig } from '../../src/proxy/proxy-config.ts';
import {
  RELAY_PATHS,
  frontendConfig,
  httpsGet,
  listenPort,
  openGreeted,
  runLoad,
  startTestProxy,
  startUpstreams,
  upstreamState,
  waitForState,
} from './proxy-fixtures.ts';

let ca: TestCa;
let cert: CertPair;

before(async () => {
  ca = await createTestCa();
  cert = await ca.issueServer('apiserver', ['DNS:localhost', 'IP:127.0.0.1', 'IP:::1']);
});
after(() => ca.close());

async function standins(t: TestContext, n: number): Promise<ApiserverStandin[]> {
  const list = Array.from({ length: n }, (_, i) => new ApiserverStandin({ cert: cert.cert, key: cert.key, name: `api-${i}` }));
  for (const s of list) await s.open();
  t.after(() => Promise.all(list.map((s) => s.close())));
  return list;
}

function readyzFrontend(list: ApiserverStandin[], over: Partial<FrontendConfig> = {}, check: Partial<FrontendConfig['healthCheck']> = {}): FrontendConfig {
  return frontendConfig(
    list.map((s) => ({ host: s.host, port: s.port })),
    over,
    { type: 'readyz', path: '/readyz', ca: ca.cert, intervalMs: 200, timeoutMs: 200, ...check },
  );
}

const addr = (s: ApiserverStandin) => ({ host: s.host, port: s.port });

/** A watch-like stream through the proxy: resolves once the first line came, counts lines after. */
function openWatch(port: number): Promise<{ res: IncomingMessage; server: string; lines: () => number; closed: () => boolean }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/api/v1/namespaces/default/pods?watch=1', ca: ca.cert, agent: false }, (res) => {
      let lines = 0;
      let closed = false;
      let server = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        lines += chunk.split('\n').length - 1;
        if (!server) {
          server = (JSON.parse(chunk.split('\n')[0]!) as { object: { server: string } }).object.server;
          resolve({ res, server, lines: () => lines, closed: () => closed });
        }
      });
      res.on('error', () => {});
      res.on('close', () => (closed = true));
    });
    req.on('error', reject);
    req.end();
  });
}

test('a refused upstream is retried on the next one with zero client-visible failures', async (t) => {
  const list = await standins(t, 3);
  // Checks every 10 s: only the data path can notice the closed upstream in this test.
  const proxy = await startTestProxy(t, [readyzFrontend(list, {}, { intervalMs: 10_000 })]);
  for (const s of list) await waitForState(proxy, addr(s), 'up');
  await list[1]!.close();
  const load = runLoad(listenPort(proxy), '/version', ca.cert, { concurrency: 5, maxRequests: 60, maxMs: 10_000 });
  const r = await load.done;
  assert.deepEqual([r.sent, r.failed, r.errors], [60, 0, []]);
  const stats = proxy.stats()[0]!;
  assert.ok(stats.retries >= 1, `retried ${stats.retries} times`);
  const down = proxy.status().frontends[0]!.upstreams[1]!;
  assert.deepEqual([down.state, down.transitions[0]!.cause, down.transitions[0]!.reason], ['down', 'connect', 'refused']);
  assert.equal(stats.failed, 0);
});

test('a hung upstream (accepts, never answers /readyz) is out within interval × fall + timeout and its connections are closed', async (t) => {
  const list = await standins(t, 3);
  const proxy = await startTestProxy(t, [readyzFrontend(list, { drainSpreadMs: 300 }, { intervalMs: 300, timeoutMs: 300, fall: 2 })]);
  for (const s of list) await waitForState(proxy, addr(s), 'up');
  const watches = await Promise.all(Array.from({ length: 6 }, () => openWatch(listenPort(proxy))));
  t.after(() => watches.forEach((w) => w.res.destroy()));
  const hung = list[2]!;
  const started = performance.now();
  hung.setReadyz('hang');
  await waitForState(proxy, addr(hung), 'down');
  const ms = performance.now() - started;
  t.diagnostic(`hung upstream marked down after ${Math.round(ms)} ms (bound 900 ms + jitter)`);
  // Bound: 300 × 2 + 300 = 900 ms, plus ±10% jitter on two intervals and a loaded machine.
  assert.ok(ms < 900 + 60 + 400, `marked down after ${Math.round(ms)} ms`);
  const onHung = watches.filter((w) => w.server === hung.name);
  assert.equal(onHung.length, 2, 'least connections put two watches on each upstream');
  await waitFor(() => onHung.every((w) => w.closed()), { timeoutMs: 2000, what: 'watches on the hung upstream closed' });
  assert.ok(
    watches.filter((w) => w.server !== hung.name).every((w) => !w.closed()),
    'the other watches stay',
  );
  const before = upstreamState(proxy, addr(hung)).total;
  for (let i = 0; i < 10; i++) assert.equal((await httpsGet(listenPort(proxy), '/version', ca.cert)).status, 200);
  assert.equal(upstreamState(proxy, addr(hung)).total, before, 'no new connection went to the hung upstream');
});

for (const relay of RELAY_PATHS) {
  test(`an upstream that accepts but never sends a byte is marked down by the first connection it leaves unanswered (${relay} path)`, async (t) => {
    const serve = async (handler: (s: Socket) => void): Promise<{ host: string; port: number }> => {
      const server = createServer(handler);
      const sockets = new Set<Socket>();
      server.on('connection', (s) => {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      // Its connections are closed here: close() alone would wait for the proxy's, which this hook runs before.
      t.after(() => new Promise<void>((r) => (sockets.forEach((s) => s.destroy()), server.close(() => r()))));
      return { host: '127.0.0.1', port: (server.address() as AddressInfo).port };
    };
    const goodAddr = await serve((s) => s.pipe(s));
    // Reads and never answers: what a client sees of a SIGSTOPped apiserver (the kernel accepts).
    const silentAddr = await serve((s) => s.on('data', () => {}));
    // TCP checks every 10 s pass for both: only the data path can notice the silence in this test.
    const proxy = await startTestProxy(t, [frontendConfig([goodAddr, silentAddr], { firstByteTimeoutMs: 300 }, { intervalMs: 10_000 })], undefined, {
      relay,
    });
    await waitForState(proxy, silentAddr, 'up');
    const clients = Array.from({ length: 4 }, () =>
      connect(listenPort(proxy), '127.0.0.1', function (this: Socket) {
        this.write('hello');
      }),
    );
    t.after(() => clients.forEach((c) => c.destroy()));
    clients.forEach((c) => c.on('error', () => {}));
    const started = performance.now();
    await waitForState(proxy, silentAddr, 'down');
    const ms = performance.now() - started;
    t.diagnostic(`silent upstream marked down after ${Math.round(ms)} ms (firstByteTimeout 300 ms)`);
    assert.ok(ms < 300 + 700, `marked down after ${Math.round(ms)} ms`);
    const st = proxy.status().frontends[0]!.upstreams[1]!;
    assert.deepEqual([st.state, st.transitions[0]!.cause, st.transitions[0]!.reason], ['down', 'connect', 'timeout']);
    assert.match(st.transitions[0]!.detail, /no byte from the upstream within 300 ms/);
    assert.equal(upstreamState(proxy, goodAddr).state, 'up', 'the upstream that answers stays up');
  });
}

test('an upstream in graceful shutdown (/readyz 503, still serving) is drained with zero failed requests', async (t) => {
  const list = await standins(t, 3);
  const proxy = await startTestProxy(t, [readyzFrontend(list)]);
  for (const s of list) await waitForState(proxy, addr(s), 'up');
  const watches = await Promise.all(Array.from({ length: 3 }, () => openWatch(listenPort(proxy))));
  t.after(() => watches.forEach((w) => w.res.destroy()));
  const load = runLoad(listenPort(proxy), '/version', ca.cert, { concurrency: 4, maxRequests: 2000, maxMs: 8000 });
  await waitFor(() => load.result.sent > 40, { what: 'load running' });
  const leaving = list[0]!;
  leaving.setReadyz('fail');
  await waitForState(proxy, addr(leaving), 'down', 3000);
  const totalAtDown = upstreamState(proxy, addr(leaving)).total;
  const watch = watches.find((w) => w.server === leaving.name)!;
  const linesAtDown = watch.lines();
  const sentAtDown = load.result.sent;
  await waitFor(() => load.result.sent > sentAtDown + 40 && watch.lines() >= linesAtDown + 2, {
    timeoutMs: 4000,
    what: 'more load and watch lines after the drain',
  });
  const r = await load.stop();
  t.diagnostic(
    `${r.sent} requests, ${r.failed} failed; drained upstream got ${upstreamState(proxy, addr(leaving)).total - totalAtDown} connections after down`,
  );
  assert.deepEqual([r.failed, r.errors], [0, []], `${r.sent} requests`);
  // Requests already being connected when the check flipped may still land there: allow the concurrency.
  assert.ok(upstreamState(proxy, addr(leaving)).total <= totalAtDown + 4, 'new connections stopped going to the leaving upstream');
  assert.equal(watch.closed(), false, 'its established connection is still served');
  assert.equal(proxy.status().frontends[0]!.upstreams[0]!.transitions[0]!.reason, 'http-status');
});

test('when every upstream fails /readyz the proxy fails open, and one that recovers takes the traffic', async (t) => {
  const list = await standins(t, 3);
  const proxy = await startTestProxy(t, [readyzFrontend(list)]);
  for (const s of list) s.setReadyz('fail');
  for (const s of list) await waitForState(proxy, addr(s), 'down');
  assert.equal(proxy.readiness().ready, false);
  for (let i = 0; i < 10; i++) assert.equal((await httpsGet(listenPort(proxy), '/version', ca.cert)).status, 200);
  assert.equal(proxy.stats()[0]!.failOpen, 10);
  const back = list[1]!;
  const started = performance.now();
  back.setReadyz('ok');
  await waitForState(proxy, addr(back), 'up');
  assert.ok(performance.now() - started < 200 * 2 * 1.1 + 500, 'up after rise checks');
  assert.equal(proxy.readiness().ready, true);
  const before = list.map((s) => upstreamState(proxy, addr(s)).total);
  for (let i = 0; i < 10; i++) assert.equal((await httpsGet(listenPort(proxy), '/version', ca.cert)).status, 200);
  const after = list.map((s) => upstreamState(proxy, addr(s)).total);
  assert.deepEqual(
    after.map((n, i) => n - before[i]!),
    [0, 10, 0],
    'all new connections go to the recovered upstream',
  );
});

test('when every upstream is gone, the first one back is used at once, before its checks pass', async (t) => {
  const list = await standins(t, 2);
  const proxy = await startTestProxy(t, [readyzFrontend(list, {}, { intervalMs: 5000 })]);
  for (const s of list) await waitForState(proxy, addr(s), 'up');
  for (const s of list) await s.close();
  await assert.rejects(httpsGet(listenPort(proxy), '/version', ca.cert), 'nothing accepts: the client sees the failure');
  assert.equal(proxy.stats()[0]!.failed, 1);
  await list[0]!.open();
  assert.equal((await httpsGet(listenPort(proxy), '/version', ca.cert)).status, 200);
  assert.equal(upstreamState(proxy, addr(list[0]!)).state, 'down', 'served by fail-open while still marked down');
});

test('the connections of a dead upstream are closed spread with jitter over drainSpread', async (t) => {
  const ups = await startUpstreams(t, ['a', 'b']);
  const spread = 1000;
  const proxy = await startTestProxy(t, [
    frontendConfig(
      ups.map((u) => u.address),
      { drainSpreadMs: spread },
    ),
  ]);
  for (const u of ups) await waitForState(proxy, u.address, 'up');
  const conns = await Promise.all(Array.from({ length: 20 }, () => openGreeted(listenPort(proxy))));
  t.after(() => conns.forEach((c) => c.socket.destroy()));
  const closedAt = new Map<number, number>();
  conns.forEach((c, i) => c.socket.once('close', () => closedAt.set(i, performance.now())));
  ups[1]!.stopListening(); // its established connections stay open on its side: only the proxy closes them
  await waitForState(proxy, ups[1]!.address, 'down');
  const downAt = performance.now();
  await waitFor(() => closedAt.size >= 10, { timeoutMs: spread + 2000, what: 'ten connections closed' });
  const times = [...closedAt.values()].sort((x, y) => x - y);
  const onB = conns
    .map((c, i) => [c.upstream, i] as const)
    .filter(([u]) => u === 'b')
    .map(([, i]) => i);
  assert.equal(onB.length, 10);
  assert.deepEqual(
    [...closedAt.keys()].sort((x, y) => x - y),
    onB,
    'exactly the connections of the dead upstream',
  );
  const width = times.at(-1)! - times[0]!;
  t.diagnostic(`10 closes from ${Math.round(times[0]! - downAt)} to ${Math.round(times.at(-1)! - downAt)} ms after down`);
  assert.ok(width > spread * 0.5, `closes spread over ${Math.round(width)} ms`);
  assert.ok(times.at(-1)! - downAt < spread + 300, 'all within the window');
  const gaps = times.slice(1).map((x, i) => x - times[i]!);
  assert.ok(gaps.filter((g) => g < 5).length <= 3, `no burst: gaps ${gaps.map(Math.round).join(',')}`);
  assert.equal(proxy.stats()[0]!.closedByProxy, 10);
});
