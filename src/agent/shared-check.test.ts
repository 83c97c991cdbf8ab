import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CheckResultFeed, decideSharedCheck, type WatchProbeKeys } from './shared-check.ts';
import type { FrontendConfig, HealthCheckConfig } from '../proxy/proxy-config.ts';

const check = (over: Partial<HealthCheckConfig> = {}): HealthCheckConfig => ({
  type: 'readyz',
  path: '/readyz',
  caFile: '/ca.crt',
  insecureSkipTlsVerify: false,
  intervalMs: 2000,
  timeoutMs: 1000,
  rise: 2,
  fall: 3,
  ...over,
});
const frontend = (over: Partial<FrontendConfig> = {}): FrontendConfig => ({
  name: 'api',
  listen: [{ host: '127.0.0.1', port: 6443 }],
  upstreams: [
    { host: '10.0.0.11', port: 6443 },
    { host: '10.0.0.12', port: 6443 },
  ],
  healthCheck: check(),
  connectTimeoutMs: 1000,
  idleTimeoutMs: 0,
  drainSpreadMs: 0,
  ...over,
});
const watch = (over: Partial<WatchProbeKeys> = {}): WatchProbeKeys => ({
  healthUrl: 'https://10.0.0.11:6443/readyz',
  caFile: '/ca.crt',
  insecureSkipTlsVerify: false,
  ...over,
});

test('the same request is shared, with a wait bound from the proxy interval and timeout', () => {
  assert.deepEqual(decideSharedCheck(watch(), [frontend()]), { shared: true, frontend: 'api', upstream: '10.0.0.11:6443', waitMs: 2200 + 1000 + 1000 });
  const v6 = decideSharedCheck(watch({ healthUrl: 'https://[0:0::1]:6443/readyz' }), [frontend({ upstreams: [{ host: '::1', port: 6443 }] })]);
  assert.deepEqual(v6.shared && v6.upstream, '[::1]:6443');
});

test('any difference in the request means the watcher probes on its own, with the reason', () => {
  const cases: Array<[WatchProbeKeys, FrontendConfig, RegExp]> = [
    [watch({ healthUrl: 'https://localhost:6443/readyz' }), frontend(), /is a name/],
    [watch({ healthUrl: 'https://10.0.0.13:6443/readyz' }), frontend(), /no proxy frontend has the upstream 10\.0\.0\.13:6443/],
    [watch({ healthUrl: 'https://10.0.0.11:443/readyz' }), frontend(), /no proxy frontend has the upstream 10\.0\.0\.11:443/],
    [watch(), frontend({ healthCheck: check({ type: 'tls' }) }), /its check is tls/],
    [watch({ healthUrl: 'https://10.0.0.11:6443/livez' }), frontend(), /check path is \/readyz/],
    [watch({ healthUrl: 'https://10.0.0.11:6443/readyz?verbose' }), frontend(), /check path is \/readyz/],
    [watch({ caFile: undefined, insecureSkipTlsVerify: true }), frontend(), /verifies the certificate differently/],
    [watch({ caFile: '/other.crt' }), frontend(), /verifies the certificate differently/],
    [watch({ tokenFile: '/token' }), frontend(), /authenticates differently/],
    [watch(), frontend({ healthCheck: check({ clientCert: '/c', clientKey: '/k' }) }), /authenticates differently/],
    [watch({ tlsServerName: 'api' }), frontend(), /different TLS server name/],
    [watch(), frontend({ discovery: { type: 'kubernetes', debounceMs: 1, cacheFile: '/c' } }), /comes from discovery/],
  ];
  for (const [w, f, reason] of cases) {
    const d = decideSharedCheck(w, [f]);
    assert.equal(d.shared, false, JSON.stringify(w));
    assert.match(d.shared ? '' : d.reason, reason);
  }
});

test('property: shared only when host, port and path match an upstream of a readyz frontend', () => {
  const octet = fc.integer({ min: 0, max: 255 });
  fc.assert(
    fc.property(fc.tuple(octet, octet), fc.integer({ min: 1, max: 65535 }), fc.constantFrom('/readyz', '/livez', '/health'), (last, port, path) => {
      const host = `10.0.${last[0]}.${last[1]}`;
      const d = decideSharedCheck(watch({ healthUrl: `https://${host}:${port}${path}` }), [frontend()]);
      const expected = (host === '10.0.0.11' || host === '10.0.0.12') && port === 6443 && path === '/readyz';
      assert.equal(d.shared, expected);
    }),
  );
});

test('the feed hands the next result to every waiter of that upstream only, and fails on silence', async () => {
  const feed = new CheckResultFeed();
  const ok = { ok: true, status: 200, latencyMs: 3, reason: 'ok' as const, detail: '200' };
  const stop = new AbortController();
  const a1 = feed.next('api', '10.0.0.11:6443', 60_000, stop.signal);
  const a2 = feed.next('api', '10.0.0.11:6443', 60_000, stop.signal);
  const other = feed.next('api', '10.0.0.12:6443', 50, stop.signal);
  feed.push('api', '10.0.0.11:6443', ok);
  assert.deepEqual(await a1, ok);
  assert.deepEqual(await a2, ok);
  const silent = await other;
  assert.equal(silent.ok, false);
  assert.equal(silent.reason, 'timeout');
  assert.match(silent.detail, /no check result from proxy frontend "api" for 10\.0\.0\.12:6443 within 50 ms/);
  const aborted = feed.next('api', '10.0.0.11:6443', 60_000, stop.signal);
  stop.abort();
  assert.equal((await aborted).ok, false);
  feed.push('api', '10.0.0.11:6443', ok); // nobody waits: dropped
});
