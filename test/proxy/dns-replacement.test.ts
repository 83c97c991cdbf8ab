// Continuity through replacement with real sockets: upstreams given as a DNS name, every apiserver
// replaced by one at a new address, one at a time, while a client connects through the proxy all
// along. The name's new answer brings the new addresses in; a departed address is kept while it
// serves until its replacement has passed its checks; a failed or empty answer keeps the last set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from '../../src/admin/metrics.ts';
import { startProxy, type ProxyHandle } from '../../src/proxy/start-proxy.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { TEST_NATIVE_RELAY, frontendConfig, listenPort, openGreeted } from './proxy-fixtures.ts';

/** A server on host:port that greets each connection with its name. */
class Named {
  readonly host: string;
  readonly name: string;
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  port: number;
  constructor(name: string, host: string, port: number) {
    this.name = name;
    this.host = host;
    this.port = port;
  }
  async listen(): Promise<void> {
    const server = createServer((s) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
      s.on('error', () => undefined);
      s.write(`${this.name}\n`);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, resolve);
    });
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }
  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise((r) => server.close(r));
  }
}

/** Connects through the proxy every 20 ms until stopped; the longest time without a success and the failures. */
function prober(port: number) {
  const state = { ok: 0, failed: 0, longestGapMs: 0, stopped: false, by: new Map<string, number>() };
  let lastOk = performance.now();
  const done = (async () => {
    for (let i = 0; i < 5000 && !state.stopped; i++) {
      try {
        const g = await openGreeted(port);
        g.socket.destroy();
        const now = performance.now();
        state.longestGapMs = Math.max(state.longestGapMs, now - lastOk);
        lastOk = now;
        state.ok++;
        state.by.set(g.upstream, (state.by.get(g.upstream) ?? 0) + 1);
      } catch {
        state.failed++;
      }
      await sleep(20);
    }
  })();
  return { state, stop: async () => ((state.stopped = true), await done) };
}

async function start(
  t: TestContext,
  dns: Map<string, string[]>,
  port: number,
  withDns: boolean,
  seeds: { host: string; port: number }[] = [],
): Promise<ProxyHandle> {
  const fc = frontendConfig(seeds, withDns ? { upstreamDns: [{ name: 'api.cluster.test', port }], dnsRefreshMs: 200 } : {}, {
    intervalMs: 100,
    timeoutMs: 200,
    rise: 1,
    fall: 1,
  });
  const proxy = await startProxy(
    { frontends: [fc], shutdownGraceMs: 200 },
    {
      registry: new Registry(),
      nativeRelay: TEST_NATIVE_RELAY,
      lookup: async (name) => {
        const a = dns.get(name);
        if (!a) throw new Error(`ENOTFOUND ${name}`);
        return a;
      },
    },
  );
  t.after(() => proxy.destroy());
  return proxy;
}

const keysOf = (proxy: ProxyHandle) => proxy.status().frontends[0]!.upstreams.map((u) => u.upstream);
const stateOf = (proxy: ProxyHandle, key: string) => proxy.status().frontends[0]!.upstreams.find((u) => u.upstream === key)?.state;

async function replaceAll(t: TestContext, withDns: boolean) {
  const first = new Named('old-0', '127.0.0.11', 0);
  await first.listen();
  const port = first.port;
  const olds = [first, new Named('old-1', '127.0.0.12', port), new Named('old-2', '127.0.0.13', port)];
  for (const s of olds.slice(1)) await s.listen();
  const news = [new Named('new-0', '127.0.0.21', port), new Named('new-1', '127.0.0.22', port), new Named('new-2', '127.0.0.23', port)];
  t.after(() => Promise.all([...olds, ...news].map((s) => s.close())));
  const dns = new Map([['api.cluster.test', olds.map((s) => s.host)]]);
  const proxy = await start(t, dns, port, withDns, withDns ? [] : olds.map((s) => ({ host: s.host, port })));
  await waitFor(() => olds.every((s) => stateOf(proxy, `${s.host}:${port}`) === 'up'), { timeoutMs: 5000, intervalMs: 20, what: 'the first three up' });
  const p = prober(listenPort(proxy));
  for (let i = 0; i < 3; i++) {
    // The old apiserver goes away; its replacement comes up at a new address and DNS follows.
    await olds[i]!.close();
    await news[i]!.listen();
    dns.set(
      'api.cluster.test',
      [...news.slice(0, i + 1), ...olds.slice(i + 1)].map((s) => s.host),
    );
    if (withDns) {
      await waitFor(() => stateOf(proxy, `${news[i]!.host}:${port}`) === 'up' && !keysOf(proxy).includes(`${olds[i]!.host}:${port}`), {
        timeoutMs: 5000,
        intervalMs: 20,
        what: `new-${i} in, old-${i} out`,
      });
    } else {
      await sleep(600);
    }
  }
  await sleep(300);
  await p.stop();
  return { ...p.state, proxy, port };
}

test('every apiserver replaced at a new address, one at a time: with the DNS name the proxy follows with no failed connection', async (t) => {
  const r = await replaceAll(t, true);
  t.diagnostic(
    `DNS: ${r.ok} connections ok, ${r.failed} failed, longest gap ${Math.round(r.longestGapMs)} ms; by upstream ${JSON.stringify(Object.fromEntries(r.by))}`,
  );
  assert.equal(r.failed, 0);
  assert.ok(r.longestGapMs < 1000, `longest gap ${Math.round(r.longestGapMs)} ms`);
  assert.deepEqual(
    keysOf(r.proxy).sort(),
    ['127.0.0.21', '127.0.0.22', '127.0.0.23'].map((h) => `${h}:${r.port}`),
  );
});

test('the same replacement with a static list loses the API once the last known address is gone', async (t) => {
  const r = await replaceAll(t, false);
  t.diagnostic(`static: ${r.ok} ok, ${r.failed} failed`);
  assert.ok(r.failed > 0, 'a static list cannot follow');
});

test('a new address that never passes its checks does not retire the one that serves; a failed lookup keeps the set', async (t) => {
  const a = new Named('a', '127.0.0.31', 0);
  await a.listen();
  t.after(() => a.close());
  const dns = new Map([['api.cluster.test', ['127.0.0.31']]]);
  const proxy = await start(t, dns, a.port, true);
  await waitFor(() => stateOf(proxy, `127.0.0.31:${a.port}`) === 'up', { timeoutMs: 5000, intervalMs: 20, what: 'a up' });
  dns.set('api.cluster.test', ['127.0.0.32']); // nothing listens there
  await waitFor(() => stateOf(proxy, `127.0.0.32:${a.port}`) === 'down', { timeoutMs: 5000, intervalMs: 20, what: 'the new address checked and down' });
  assert.ok(keysOf(proxy).includes(`127.0.0.31:${a.port}`), 'the serving address stays');
  const g = await openGreeted(listenPort(proxy));
  g.socket.destroy();
  assert.equal(g.upstream, 'a');
  dns.delete('api.cluster.test'); // NXDOMAIN from now on
  await sleep(500);
  assert.ok(keysOf(proxy).includes(`127.0.0.31:${a.port}`), 'a failed lookup changes nothing');
});
