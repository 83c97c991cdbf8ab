// Discovery against a real kube-apiserver (Kubernetes 1.20: EndpointSlice is v1beta1 there, and its
// endpoint reconciler is off, so the test writes the `kubernetes` EndpointSlice by hand). The
// apiserver is reached at 127.0.0.2-4 through plain TCP forwarders, so the discovered upstreams are
// real apiservers on distinct addresses.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { startProxy, type ProxyHandle } from '../../src/proxy/start-proxy.ts';
import type { FrontendConfig } from '../../src/proxy/proxy-config.ts';
import { createKubeApi } from '../../src/clients/kube/kube-api.ts';
import { loadKubeConfig } from '../../src/clients/kube/load-kube-config.ts';
import type { KubeObject } from '../../src/clients/kube/kube-types.ts';
import type { ResourceClient } from '../../src/clients/kube/resource-client.ts';
import { freePort, waitFor } from '../../testkit/wait-for.ts';
import { apiserverSkipReason, startTestApiserver, type TestApiserver } from './kube-apiserver-fixture.ts';
import { noteTierSkip } from '../../testkit/test-tiers.ts';
import { TEST_NATIVE_RELAY } from './proxy-fixtures.ts';

const skip = apiserverSkipReason();
noteTierSkip('kube-apiserver', skip);
let api: TestApiserver;
let slices: ResourceClient<KubeObject & Record<string, unknown>>;
let ca: string;
let token: string;
let dir: string;
let fwdPort: number;
const forwarders: Server[] = [];
const sockets = new Set<Socket>();

/** 127.0.0.x:fwdPort → the apiserver, bytes only (TLS stays end to end). */
async function forwarder(host: string): Promise<void> {
  const server = createServer((c) => {
    const u = connect({ host: '127.0.0.1', port: api.port });
    for (const s of [c, u]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        c.destroy();
        u.destroy();
      });
    }
    c.pipe(u).pipe(c);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(fwdPort, host, () => resolve());
  });
  fwdPort = (server.address() as { port: number }).port; // the first binds port 0; the others join its port
  forwarders.push(server);
}

before(async () => {
  if (skip) return;
  api = await startTestApiserver();
  [ca, token] = [await readFile(api.caFile, 'utf8'), (await readFile(api.tokenFile, 'utf8')).trim()];
  dir = await mkdtemp(join(tmpdir(), 'kw-discovery-'));
  fwdPort = 0;
  for (const h of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) await forwarder(h);
  const kube = createKubeApi(loadKubeConfig({ kind: 'file', path: api.kubeconfig }));
  slices = kube.resource({ group: 'discovery.k8s.io', version: 'v1beta1', plural: 'endpointslices', kind: 'EndpointSlice', namespaced: true });
});

after(async () => {
  if (skip) return;
  for (const s of sockets) s.destroy();
  await Promise.all(forwarders.map((s) => new Promise((r) => s.close(r))));
  await api.stop();
  await rm(dir, { recursive: true, force: true });
});

const cacheFile = () => join(dir, 'proxy-upstreams.json');

function apiFrontend(seedPort: number): FrontendConfig {
  return {
    name: 'api',
    listen: [{ host: '127.0.0.1', port: 0 }],
    upstreams: [{ host: '127.0.0.1', port: seedPort }],
    // The serving certificate names 127.0.0.1 and localhost: checks of 127.0.0.2-4 verify "localhost".
    healthCheck: {
      type: 'readyz',
      path: '/readyz',
      ca,
      tokenFile: api.tokenFile,
      serverName: 'localhost',
      insecureSkipTlsVerify: false,
      intervalMs: 200,
      timeoutMs: 1000,
      rise: 1,
      fall: 2,
    },
    connectTimeoutMs: 1000,
    idleTimeoutMs: 600_000,
    drainSpreadMs: 200,
    slowStartMs: 0,
    rebalance: { enabled: false, thresholdConnections: 2, intervalMs: 1000, minAgeMs: 0 },
    discovery: { type: 'kubernetes', kubeconfig: api.kubeconfig, debounceMs: 200, cacheFile: cacheFile() },
  };
}

async function start(t: TestContext, fc: FrontendConfig): Promise<ProxyHandle> {
  const proxy = await startProxy({ frontends: [fc], shutdownGraceMs: 500 }, { nativeRelay: TEST_NATIVE_RELAY });
  t.after(() => proxy.destroy());
  return proxy;
}

async function setSlice(hosts: string[], addressType: 'IPv4' | 'IPv6' = 'IPv4'): Promise<void> {
  const body = {
    metadata: { name: 'kubernetes', namespace: 'default', labels: { 'kubernetes.io/service-name': 'kubernetes' } },
    addressType,
    endpoints: hosts.map((h) => ({ addresses: [h], conditions: { ready: true } })),
    ports: [{ name: 'https', port: fwdPort, protocol: 'TCP' }],
  };
  let old = await slices.get('default', 'kubernetes').catch(() => undefined);
  if (old && (old as unknown as { addressType?: string }).addressType !== addressType) {
    // addressType is immutable: a slice of the other family is a new object.
    await slices.delete('default', 'kubernetes');
    old = undefined;
  }
  if (old) await slices.replace({ ...body, metadata: { ...body.metadata, resourceVersion: old.metadata.resourceVersion } });
  else await slices.create(body);
}

const primaries = (p: ProxyHandle) =>
  p
    .status()
    .frontends[0]!.upstreams.filter((u) => !u.backup)
    .map((u) => u.upstream)
    .join(',');
const keyOf = (h: string) => `${h}:${fwdPort}`;

/** A watch through the proxy: a long-lived HTTPS request, as client-go keeps them. */
function openWatch(port: number): Promise<{ closed: () => boolean; destroy: () => void }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=300',
        ca,
        agent: false,
        headers: { authorization: `Bearer ${token}` },
      },
      (res) => {
        let closed = false;
        res.on('close', () => (closed = true));
        res.on('error', () => {});
        res.resume();
        resolve({ closed: () => closed, destroy: () => res.destroy() });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

test('upstreams follow the kubernetes EndpointSlice; surviving upstreams keep their state and connections; the list is cached', { skip }, async (t) => {
  await setSlice(['127.0.0.2', '127.0.0.3']);
  const proxy = await start(t, apiFrontend(api.port));
  await waitFor(() => primaries(proxy) === `${keyOf('127.0.0.2')},${keyOf('127.0.0.3')}`, {
    timeoutMs: 15_000,
    what: `discovered list (${JSON.stringify(proxy.status().frontends[0]!.discovery)})`,
  });
  const st = proxy.status().frontends[0]!;
  assert.equal((st.discovery as { source: string }).source, 'endpointslices.discovery.k8s.io/v1beta1', 'v1 is not served by 1.20: fell back to v1beta1');
  assert.deepEqual(
    st.upstreams.filter((u) => u.backup).map((u) => u.upstream),
    [`127.0.0.1:${api.port}`],
    'the seed stays, as a backup',
  );
  for (const h of ['127.0.0.2', '127.0.0.3'])
    await waitFor(() => proxy.status().frontends[0]!.upstreams.find((u) => u.upstream === keyOf(h))?.state === 'up', {
      what: `${h} up: ${JSON.stringify(proxy.status().frontends[0]!.upstreams.map((u) => u.reason))}`,
    });
  const port = proxy.addresses.get('api')![0]!.port;
  const watches = await Promise.all(Array.from({ length: 4 }, () => openWatch(port)));
  t.after(() => watches.forEach((w) => w.destroy()));
  const u3 = () => proxy.status().frontends[0]!.upstreams.find((u) => u.upstream === keyOf('127.0.0.3'))!;
  const before3 = u3();
  assert.equal(before3.connections.established, 2, 'least connections: two watches on each discovered upstream');

  await setSlice(['127.0.0.3', '127.0.0.4']);
  await waitFor(() => primaries(proxy) === `${keyOf('127.0.0.3')},${keyOf('127.0.0.4')}`, { timeoutMs: 10_000, what: 'the changed list' });
  await waitFor(() => watches.filter((w) => w.closed()).length === 2, { timeoutMs: 3000, what: 'the watches of the removed upstream drained' });
  const after3 = u3();
  assert.equal(after3.connections.established, 2, "the surviving upstream's watches are untouched");
  assert.deepEqual([after3.state, after3.transitions], [before3.state, before3.transitions], 'and so is its health state');
  // The cache is written after the list applies (start-proxy.ts saves it without holding the
  // change up), so the file catches up a moment after the status does.
  const readCache = async () => {
    const c = JSON.parse(await readFile(cacheFile(), 'utf8')) as { kind: string; frontends: { api: { upstreams: string[] } } };
    return [c.kind, c.frontends.api.upstreams];
  };
  const want = ['KubewardProxyUpstreams', [keyOf('127.0.0.3'), keyOf('127.0.0.4')]];
  await waitFor(async () => JSON.stringify(await readCache()) === JSON.stringify(want), { timeoutMs: 5000, what: 'the cache file catching up' });
  assert.deepEqual(await readCache(), want);
});

test('an EndpointSlice without endpoints is ignored: the list and the cache stay', { skip }, async (t) => {
  await setSlice(['127.0.0.3', '127.0.0.4']);
  const proxy = await start(t, apiFrontend(api.port));
  await waitFor(() => primaries(proxy) === `${keyOf('127.0.0.3')},${keyOf('127.0.0.4')}`, { timeoutMs: 15_000, what: 'discovered list' });
  await waitFor(() => (proxy.status().frontends[0]!.discovery as { synced: boolean }).synced, { what: 'discovery synced' });
  const cacheBefore = await readFile(cacheFile(), 'utf8');
  await setSlice([]);
  await waitFor(() => (proxy.status().frontends[0]!.discovery as { ignoredEmpty: number }).ignoredEmpty >= 1, {
    timeoutMs: 5000,
    what: 'the empty list seen and ignored',
  });
  assert.equal(primaries(proxy), `${keyOf('127.0.0.3')},${keyOf('127.0.0.4')}`);
  assert.equal(await readFile(cacheFile(), 'utf8'), cacheBefore);
  await setSlice(['127.0.0.3', '127.0.0.4']);
});

test('a slice address is dialled in its canonical form; what the apiserver itself refuses never gets that far', { skip }, async (t) => {
  // The apiserver validates addresses (this one refuses leading zeros); kubeward checks again
  // because older apiservers and the Endpoints fallback are laxer (endpoint-upstreams.test.ts).
  await assert.rejects(setSlice(['127.0.0.3', '127.000.000.004']), /Invalid value|invalid|must be a valid IP/i);
  await setSlice(['0:0:0:0:0:0:0:1'], 'IPv6');
  t.after(() => setSlice(['127.0.0.3', '127.0.0.4']));
  // A cache file of its own: the restart test below starts from what the tests before it cached.
  const own = apiFrontend(api.port);
  const proxy = await start(t, { ...own, discovery: { ...own.discovery!, cacheFile: join(dir, 'canonical-upstreams.json') } });
  await waitFor(() => primaries(proxy) === `[::1]:${fwdPort}`, { timeoutMs: 15_000, what: `the canonical address (${primaries(proxy)})` });
  assert.equal((proxy.status().frontends[0]!.discovery as { rejected?: string[] }).rejected, undefined);
});

test('a discovered list re-plans the connection cap: each upstream check holds descriptors', { skip }, async (t) => {
  await setSlice(['127.0.0.3', '127.0.0.4']);
  const own = apiFrontend(api.port);
  const proxy = await startProxy(
    { frontends: [{ ...own, discovery: { ...own.discovery!, cacheFile: join(dir, 'cap-upstreams.json') } }], shutdownGraceMs: 500 },
    { fdLimit: 1000, nativeRelay: TEST_NATIVE_RELAY },
  );
  t.after(() => proxy.destroy());
  const cap = () => proxy.status().frontends[0]!.connections.cap ?? 0;
  const seedOnly = cap();
  await waitFor(() => primaries(proxy) === `${keyOf('127.0.0.3')},${keyOf('127.0.0.4')}`, { timeoutMs: 15_000, what: 'discovered list' });
  // One check before (the seed), three after (two discovered, the seed as backup): four descriptors
  // more for checks (two per check, see fd-budget.ts), two connections fewer.
  await waitFor(() => cap() === seedOnly - 2, { timeoutMs: 5000, what: `cap re-planned from ${seedOnly} (now ${cap()})` });
});

test('a restart with the seed apiserver down starts from the cache file and finds the control plane', { skip }, async (t) => {
  // The previous tests left 127.0.0.3 and .4 in the cache; the seed now points at nothing.
  const deadSeed = await freePort();
  const proxy = await start(t, apiFrontend(deadSeed));
  const st = proxy.status().frontends[0]!;
  assert.deepEqual(
    st.upstreams.map((u) => [u.upstream, u.backup]),
    [
      [keyOf('127.0.0.3'), false],
      [keyOf('127.0.0.4'), false],
      [`127.0.0.1:${deadSeed}`, true],
    ],
    'from the cache, before discovery ran',
  );
  const port = proxy.addresses.get('api')![0]!.port;
  const r = await new Promise<number>((resolve, reject) => {
    request(
      { host: '127.0.0.1', port, path: '/version', ca, agent: false, headers: { authorization: `Bearer ${token}` } },
      (res) => (res.resume(), resolve(res.statusCode ?? 0)),
    )
      .on('error', reject)
      .end();
  });
  assert.equal(r, 200, 'clients reach the apiserver through the cached upstreams');
  await waitFor(() => (proxy.status().frontends[0]!.discovery as { synced: boolean }).synced, {
    timeoutMs: 10_000,
    what: 'discovery through the cached upstreams',
  });
});

test('a corrupt cache file is reported and ignored: the seeds are used', { skip }, async (t) => {
  const bad = join(dir, 'corrupt.json');
  await writeFile(bad, '{"kind":"KubewardProxyUpst');
  const fc = { ...apiFrontend(api.port), discovery: { type: 'kubernetes' as const, kubeconfig: api.kubeconfig, debounceMs: 200, cacheFile: bad } };
  const proxy = await start(t, fc);
  assert.deepEqual(
    proxy.status().frontends[0]!.upstreams.map((u) => u.upstream),
    [`127.0.0.1:${api.port}`],
  );
  await waitFor(() => primaries(proxy) === `${keyOf('127.0.0.3')},${keyOf('127.0.0.4')}`, { timeoutMs: 15_000, what: 'discovery then fills the list' });
  await waitFor(async () => JSON.parse(await readFile(bad, 'utf8')).kind === 'KubewardProxyUpstreams', { what: 'the cache rewritten whole' });
});
