// Herd control with real sockets: a recovered upstream gets only its slow-start share of new
// connections, and rebalancing moves long-lived connections onto it after a recovery, then stops.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import type { TestContext } from 'node:test';
import { Registry } from '../../src/admin/metrics.ts';
import { startProxy, type ProxyHandle } from '../../src/proxy/start-proxy.ts';
import type { FrontendConfig } from '../../src/proxy/proxy-config.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { TEST_NATIVE_RELAY, frontendConfig, listenPort, openGreeted, startUpstreams, upstreamState, waitForState } from './proxy-fixtures.ts';

function seeded(seed: number): () => number {
  return () => (seed = (seed * 16807) % 2147483647) / 2147483647;
}

async function start(t: TestContext, fc: FrontendConfig, registry = new Registry()): Promise<ProxyHandle> {
  const proxy = await startProxy({ frontends: [fc], shutdownGraceMs: 500 }, { random: seeded(42), registry, nativeRelay: TEST_NATIVE_RELAY });
  t.after(() => proxy.destroy());
  return proxy;
}

const fast = { intervalMs: 100, timeoutMs: 200, rise: 1, fall: 1 };

test('a recovered upstream gets only its slow-start share of new connections, then its full share', async (t) => {
  const ups = await startUpstreams(t, ['a', 'b', 'c']);
  const slowStartMs = 3000;
  const proxy = await start(
    t,
    frontendConfig(
      ups.map((u) => u.address),
      { slowStartMs, rebalance: { enabled: false, thresholdConnections: 2, intervalMs: 1000, minAgeMs: 0 } },
      fast,
    ),
  );
  for (const u of ups) await waitForState(proxy, u.address, 'up');
  const c = ups[2]!;
  await c.close();
  await waitForState(proxy, c.address, 'down');
  const held: Socket[] = [];
  t.after(() => held.forEach((s) => s.destroy()));
  const open = async (n: number) => {
    const names: string[] = [];
    for (let i = 0; i < n; i++) {
      const g = await openGreeted(listenPort(proxy));
      held.push(g.socket);
      names.push(g.upstream);
    }
    return names;
  };
  await open(20);
  await c.listen();
  await waitForState(proxy, c.address, 'up');
  const recoveredAt = performance.now();
  // Least connections alone would send all 20 to c, which has none.
  const early = await open(20);
  const earlyMs = performance.now() - recoveredAt;
  const toC = early.filter((n) => n === 'c').length;
  t.diagnostic(`first 20 connections in ${Math.round(earlyMs)} ms after recovery: ${toC} to c`);
  assert.ok(earlyMs < slowStartMs / 3, 'measured early in the window');
  assert.ok(toC <= 8, `c took ${toC} of 20 while its share was at most ~${Math.round((0.1 + earlyMs / slowStartMs) * 100)}%`);
  assert.ok(early.filter((n) => n !== 'c').length >= 12, 'the peers took the rest');
  await waitFor(() => performance.now() - recoveredAt > slowStartMs + 200, { timeoutMs: slowStartMs + 1000, intervalMs: 100, what: 'slow start over' });
  const late = await open(10);
  assert.deepEqual(late, Array(10).fill('c'), 'after the window least connections sends everything to the emptiest');
});

/** A client that holds one connection and reconnects through the proxy when it is closed (bounded). */
function stickyClient(port: number) {
  const state = { upstream: '', reconnects: 0, stopped: false, socket: undefined as Socket | undefined, errors: 0 };
  const connect = async (): Promise<void> => {
    try {
      const g = await openGreeted(port);
      state.socket = g.socket;
      state.upstream = g.upstream;
      g.socket.once('close', () => {
        state.upstream = '';
        if (state.stopped || state.reconnects >= 20) return;
        state.reconnects++;
        void connect();
      });
    } catch {
      state.errors++;
    }
  };
  return { state, ready: connect(), stop: () => ((state.stopped = true), state.socket?.destroy()) };
}

test('rebalancing moves long-lived connections onto a recovered upstream at a bounded rate and stops when balanced', async (t) => {
  const ups = await startUpstreams(t, ['a', 'b', 'c']);
  const registry = new Registry();
  const intervalMs = 100;
  const proxy = await start(
    t,
    frontendConfig(
      ups.map((u) => u.address),
      { slowStartMs: 300, rebalance: { enabled: true, thresholdConnections: 2, intervalMs, minAgeMs: 0 } },
      fast,
    ),
    registry,
  );
  for (const u of ups) await waitForState(proxy, u.address, 'up');
  const c = ups[2]!;
  await c.close();
  await waitForState(proxy, c.address, 'down');
  const clients = Array.from({ length: 30 }, () => stickyClient(listenPort(proxy)));
  t.after(() => clients.forEach((cl) => cl.stop()));
  await Promise.all(clients.map((cl) => cl.ready));
  const on = (name: string) => clients.filter((cl) => cl.state.upstream === name).length;
  assert.deepEqual([on('a'), on('b'), on('c')], [15, 15, 0], 'with c down everything sits on a and b');
  await c.listen();
  const recovered = performance.now();
  await waitForState(proxy, c.address, 'up');
  const spread = () => Math.max(on('a'), on('b'), on('c')) - Math.min(on('a'), on('b'), on('c'));
  await waitFor(() => spread() <= 2 && on('a') + on('b') + on('c') === 30, { timeoutMs: 8000, what: 'c filled to within the threshold' });
  const tookMs = performance.now() - recovered;
  const moved = proxy.stats()[0]!.rebalanced;
  t.diagnostic(`balanced after ${Math.round(tookMs)} ms with ${moved} closes: a=${on('a')} b=${on('b')} c=${on('c')}`);
  // Bounded rate: one close per interval (jittered down to half of it), after slow start.
  assert.ok(moved <= Math.ceil(tookMs / (intervalMs / 2)) + 1, `${moved} closes in ${Math.round(tookMs)} ms`);
  assert.ok(moved >= 8 && moved <= 12, `moved ${moved}`);
  const active = proxy.stats()[0]!.upstreams.map((u) => u.active);
  assert.ok(Math.max(...active) - Math.min(...active) <= 2, `active ${active.join('/')}`);
  // Ten more rounds: balanced, so nothing else is closed. Counted, not slept: the health checks
  // of a run on the same 100 ms interval as the rebalance rounds, so ten more of them take about
  // ten rounds whatever the machine's speed.
  const before = proxy.stats()[0]!.rebalanced;
  const checksOfA = async () =>
    Number(
      new RegExp(`kubeward_proxy_checks_total\\{[^}]*upstream="127\\.0\\.0\\.1:${ups[0]!.address.port}"[^}]*result="ok"[^}]*\\} (\\d+)`).exec(
        await registry.metrics(),
      )?.[1] ?? 0,
    );
  const checksBefore = await checksOfA();
  await waitFor(async () => (await checksOfA()) >= checksBefore + 10, { timeoutMs: 10_000, what: `ten more check rounds (interval ${intervalMs} ms)` });
  assert.equal(proxy.stats()[0]!.rebalanced, before, 'no churn once balanced');
  assert.equal(
    clients.reduce((n, cl) => n + cl.state.errors, 0),
    0,
    'every client reconnected through the proxy',
  );
  assert.equal(upstreamState(proxy, c.address).active, on('c'));
  assert.match(
    await registry.metrics(),
    new RegExp(`kubeward_proxy_closed_connections_total\\{frontend="test",upstream="127\\.0\\.0\\.1:\\d+",why="rebalance"\\} \\d+`),
  );
});

test('rebalancing closes quiet connections and leaves the older one whose client keeps sending requests', async (t) => {
  const ups = await startUpstreams(t, ['a', 'b']);
  const proxy = await start(
    t,
    frontendConfig(
      ups.map((u) => u.address),
      { slowStartMs: 300, rebalance: { enabled: true, thresholdConnections: 2, intervalMs: 100, minAgeMs: 0 } },
      fast,
    ),
  );
  for (const u of ups) await waitForState(proxy, u.address, 'up');
  const b = ups[1]!;
  await b.close();
  await waitForState(proxy, b.address, 'down');
  // The oldest connection carries a request every 20 ms (a keep-alive client in use); the nine
  // after it are quiet (idle keep-alive connections, quiet watches).
  const busy = await openGreeted(listenPort(proxy));
  t.after(() => busy.socket.destroy());
  let busyClosed = false;
  busy.socket.once('close', () => (busyClosed = true));
  busy.socket.on('error', () => {});
  const sending = setInterval(() => busy.socket.write('GET / HTTP/1.1\r\n\r\n'), 20);
  t.after(() => clearInterval(sending));
  const quiet = Array.from({ length: 9 }, () => stickyClient(listenPort(proxy)));
  t.after(() => quiet.forEach((cl) => cl.stop()));
  await Promise.all(quiet.map((cl) => cl.ready));
  assert.equal(busy.upstream, 'a');
  assert.ok(
    quiet.every((cl) => cl.state.upstream === 'a'),
    'with b down everything sits on a',
  );
  await b.listen();
  await waitForState(proxy, b.address, 'up');
  const onB = () => quiet.filter((cl) => cl.state.upstream === 'b').length;
  await waitFor(() => onB() >= 4, { timeoutMs: 8000, what: 'quiet connections moved to b' });
  assert.equal(busyClosed, false, 'the connection with requests in flight was left alone');
  assert.ok(proxy.stats()[0]!.rebalanced >= 4);
});

test('recovery pacing: 500 clients reconnecting at once reach a lone recovered upstream at the paced rate, none refused', async (t) => {
  const ups = await startUpstreams(t, ['a', 'b']);
  const [a, b] = ups as [(typeof ups)[0], (typeof ups)[0]];
  const pace = { ratePerSec: 200, burst: 10 };
  const proxy = await start(
    t,
    frontendConfig(
      ups.map((u) => u.address),
      { slowStartMs: 10_000, recovery: pace, rebalance: { enabled: false, thresholdConnections: 2, intervalMs: 1000, minAgeMs: 0 } },
      fast,
    ),
  );
  for (const u of ups) await waitForState(proxy, u.address, 'up');
  await a.close();
  await b.close();
  await waitForState(proxy, a.address, 'down');
  await waitForState(proxy, b.address, 'down');
  const arrivals: number[] = [];
  const hold = a.onConnection;
  a.onConnection = (s) => {
    arrivals.push(performance.now());
    hold(s);
  };
  await a.listen();
  await waitForState(proxy, a.address, 'up');
  const started = performance.now();
  const results = await Promise.allSettled(Array.from({ length: 500 }, () => openGreeted(listenPort(proxy))));
  const doneMs = performance.now() - started;
  t.after(() => results.forEach((r) => r.status === 'fulfilled' && r.value.socket.destroy()));
  const failed = results.filter((r) => r.status === 'rejected').length;
  const fromStart = arrivals.filter((x) => x >= started).map((x) => x - started);
  let busiest = 0;
  for (let from = 0; from < doneMs; from += 50) busiest = Math.max(busiest, fromStart.filter((x) => x >= from && x < from + 1000).length);
  t.diagnostic(`500 clients connected in ${Math.round(doneMs)} ms, ${failed} failed; busiest second: ${busiest} new connections at the upstream`);
  assert.equal(failed, 0);
  // The rate over the whole run, from the first arrival to the last: the burst and the tcp health
  // checks (one per 100 ms) aside, at most the rate (10 % for timer slack).
  const spanS = (Math.max(...fromStart) - Math.min(...fromStart)) / 1000;
  const rate = (fromStart.length - pace.burst - 10 * spanS) / spanS;
  t.diagnostic(`mean rate after the burst: ${Math.round(rate)}/s over ${spanS.toFixed(2)} s`);
  assert.ok(rate <= pace.ratePerSec * 1.1, `mean rate ${Math.round(rate)}/s`);
  assert.ok(doneMs >= ((500 - pace.burst) / pace.ratePerSec) * 1000 * 0.9, `paced: took ${Math.round(doneMs)} ms`);
  // The busiest second, loosely: accepts of a starved test process land in batches; unpaced, all 500 land at once.
  assert.ok(busiest <= 2 * (pace.burst + pace.ratePerSec), `busiest second: ${busiest}`);
  assert.ok(upstreamState(proxy, a.address).active >= 500);
});
