// Version skew through the proxy with real TLS apiserver stand-ins: with --kubelet-version set, an
// upstream older than the kubelet gets no connection while a newer one is up, and the older ones
// still serve when no newer one is left (HA before skew).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { createTestCa, type TestCa, type CertPair } from '../../testkit/certs.ts';
import { ApiserverStandin } from '../../testkit/apiserver-standin.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { parseKubeVersion } from '../../src/proxy/version-skew.ts';
import { frontendConfig, httpsGet, listenPort, startTestProxy, waitForState } from './proxy-fixtures.ts';
import type { ProxyHandle } from '../../src/proxy/start-proxy.ts';

let ca: TestCa;
let cert: CertPair;

before(async () => {
  ca = await createTestCa();
  cert = await ca.issueServer('apiserver', ['DNS:localhost', 'IP:127.0.0.1', 'IP:::1']);
});
after(() => ca.close());

async function standins(t: TestContext, versions: string[]): Promise<ApiserverStandin[]> {
  const list = versions.map((v, i) => new ApiserverStandin({ cert: cert.cert, key: cert.key, name: `api-${i}`, gitVersion: v }));
  for (const s of list) await s.open();
  t.after(() => Promise.all(list.map((s) => s.close())));
  return list;
}

const addr = (s: ApiserverStandin) => ({ host: s.host, port: s.port });

async function proxyFor(t: TestContext, list: ApiserverStandin[], kubeletVersion: string): Promise<ProxyHandle> {
  const fc = frontendConfig(
    list.map(addr),
    { kubeletVersion: parseKubeVersion(kubeletVersion), slowStartMs: 0 },
    { type: 'readyz', path: '/readyz', ca: ca.cert, intervalMs: 100, timeoutMs: 300 },
  );
  const proxy = await startTestProxy(t, [fc]);
  for (const s of list) await waitForState(proxy, addr(s), 'up');
  // Versions are read after the first passing check: wait until every upstream reports one.
  await waitFor(() => proxy.status().frontends[0]!.upstreams.every((u) => u.version !== undefined), { timeoutMs: 5000, intervalMs: 20, what: 'versions read' });
  return proxy;
}

/** Sequential requests through the proxy, each on a new connection; counts which stand-in answered. */
async function spread(proxy: ProxyHandle, n: number): Promise<{ by: Map<string, number>; failed: number }> {
  const by = new Map<string, number>();
  let failed = 0;
  for (let i = 0; i < n; i++) {
    try {
      const r = await httpsGet(listenPort(proxy), '/api/v1/namespaces', ca.cert);
      const server = (JSON.parse(r.body) as { server: string }).server;
      by.set(server, (by.get(server) ?? 0) + 1);
    } catch {
      failed++;
    }
  }
  return { by, failed };
}

test('mid-upgrade: a 1.31 kubelet sends nothing to the 1.30 apiserver while a 1.31 one is up', async (t) => {
  const list = await standins(t, ['v1.30.4', 'v1.31.1', 'v1.30.4']);
  const proxy = await proxyFor(t, list, 'v1.31.0');
  const { by, failed } = await spread(proxy, 60);
  t.diagnostic(`60 connections: ${JSON.stringify(Object.fromEntries(by))}`);
  assert.equal(failed, 0);
  assert.equal(by.get('api-1'), 60, 'every connection to the one at the kubelet version');
  // Without the kubelet's version, least connections spreads over all three.
  const plain = await startTestProxy(t, [
    frontendConfig(list.map(addr), { slowStartMs: 0 }, { type: 'readyz', path: '/readyz', ca: ca.cert, intervalMs: 100, timeoutMs: 300 }),
  ]);
  for (const s of list) await waitForState(plain, addr(s), 'up');
  const spreadPlain = await spread(plain, 60);
  assert.ok((spreadPlain.by.get('api-0') ?? 0) > 0 && (spreadPlain.by.get('api-2') ?? 0) > 0, 'the older ones serve when no preference is set');
});

test('when the only newer apiserver goes down the older ones serve at once, and it takes over again when it is back', async (t) => {
  const list = await standins(t, ['v1.30.4', 'v1.31.1', 'v1.30.4']);
  const proxy = await proxyFor(t, list, '1.31');
  const newer = list[1]!;
  await newer.close();
  await waitForState(proxy, addr(newer), 'down');
  const during = await spread(proxy, 20);
  assert.equal(during.failed, 0, 'no loss of HA');
  assert.equal((during.by.get('api-0') ?? 0) + (during.by.get('api-2') ?? 0), 20);
  // An upgrade brings it back at a newer version still: read again at its rise.
  newer.version = 'v1.32.0';
  await newer.open();
  await waitForState(proxy, addr(newer), 'up');
  await waitFor(() => proxy.status().frontends[0]!.upstreams.find((u) => u.upstream.endsWith(`:${newer.port}`))?.version === '1.32', {
    timeoutMs: 5000,
    intervalMs: 20,
    what: 'the new version read',
  });
  const after = await spread(proxy, 20);
  assert.equal(after.by.get('api-1'), 20);
});
