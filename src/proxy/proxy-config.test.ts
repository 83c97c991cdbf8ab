import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { parse as parseYaml } from 'yaml';
import fc from 'fast-check';
import { checkProxyConfig, proxyFields, resolveProxyConfig } from './proxy-config.ts';

const schema = z.strictObject(proxyFields);
const parse = (raw: unknown) => schema.parse(raw);

test('flags alone make one frontend named default, listening on loopback 6443 unless told otherwise', () => {
  const c = resolveProxyConfig(parse({ upstream: ['10.0.0.1:6443', '10.0.0.2:6443'] }));
  assert.equal(c.frontends.length, 1);
  const f = c.frontends[0]!;
  assert.deepEqual([f.name, f.listen, f.upstreams.length], ['default', [{ host: '127.0.0.1', port: 6443 }], 2]);
  assert.deepEqual(
    [f.healthCheck.type, f.healthCheck.path, f.healthCheck.intervalMs, f.healthCheck.timeoutMs, f.healthCheck.rise, f.healthCheck.fall],
    ['readyz', '/readyz', 1000, 1000, 2, 2],
  );
  assert.deepEqual([f.connectTimeoutMs, f.idleTimeoutMs, f.maxRetries, f.drainSpreadMs, c.shutdownGraceMs], [1000, 600_000, undefined, 5000, 30_000]);
});

test('top-level keys are defaults for every frontend and a frontend overrides them', () => {
  const yaml = `
interval: 2s
caFile: /etc/kubernetes/pki/ca.crt
drainSpread: 3s
frontends:
  - name: apiserver
    listen: ["127.0.0.1:6443", "[::1]:6443"]
    upstreams: ["10.0.0.1:6443"]
    healthCheck: {type: readyz, path: /readyz, insecureSkipTlsVerify: true}
    connectTimeout: 1s
    idleTimeout: 10m
  - name: etcd
    listen: ["127.0.0.1:2379"]
    upstreams: ["10.0.0.1:2379"]
    healthCheck: {type: readyz, path: /health, caFile: /etc/ssl/etcd/ca.pem, clientCert: /c.pem, clientKey: /k.pem, interval: 500ms}
    drainSpread: 0s
`;
  const c = resolveProxyConfig(parse(parseYaml(yaml)));
  const [api, etcd] = c.frontends;
  assert.deepEqual(
    [api!.listen[1], api!.healthCheck.caFile, api!.healthCheck.insecureSkipTlsVerify, api!.healthCheck.intervalMs, api!.drainSpreadMs],
    [{ host: '::1', port: 6443 }, '/etc/kubernetes/pki/ca.crt', true, 2000, 3000],
  );
  assert.deepEqual(
    [etcd!.healthCheck.path, etcd!.healthCheck.caFile, etcd!.healthCheck.intervalMs, etcd!.drainSpreadMs],
    ['/health', '/etc/ssl/etcd/ca.pem', 500, 0],
  );
  assert.equal(checkProxyConfig(parse(parseYaml(yaml))), undefined);
});

const problems: { name: string; raw: unknown; want: RegExp }[] = [
  { name: 'nothing to proxy', raw: {}, want: /nothing to proxy/ },
  { name: '--listen without --upstream', raw: { listen: ['127.0.0.1:1'] }, want: /--listen needs at least one --upstream/ },
  {
    name: 'the same listen address in two frontends',
    raw: {
      frontends: [
        { name: 'a', listen: ['127.0.0.1:1'], upstreams: ['1.1.1.1:1'] },
        { name: 'b', listen: ['127.0.0.1:1'], upstreams: ['1.1.1.1:1'] },
      ],
    },
    want: /^frontends\[1\]\.listen: 127\.0\.0\.1:1 is also the listen address of frontend "a"/,
  },
  {
    name: 'the flags frontend and a file frontend on one address',
    raw: { upstream: ['1.1.1.1:1'], frontends: [{ name: 'a', listen: ['127.0.0.1:6443'], upstreams: ['1.1.1.1:1'] }] },
    want: /^frontends\[0\]\.listen: 127\.0\.0\.1:6443 is also the listen address of frontend "default"/,
  },
  {
    name: 'two frontends with one name',
    raw: {
      frontends: [
        { name: 'a', listen: ['127.0.0.1:1'], upstreams: ['1.1.1.1:1'] },
        { name: 'a', listen: ['127.0.0.1:2'], upstreams: ['1.1.1.1:1'] },
      ],
    },
    want: /^frontends\[1\]\.name: .*used twice/,
  },
  { name: 'an upstream listed twice', raw: { upstream: ['1.1.1.1:1', '1.1.1.1:1'] }, want: /^--upstream: 1\.1\.1\.1:1 is listed twice/ },
  {
    name: 'a client certificate without its key',
    raw: { upstream: ['1.1.1.1:1'], clientCert: '/c.pem' },
    want: /--client-cert\/--client-key: give both or neither/,
  },
  {
    name: 'a readyz check with neither --ca-file nor --insecure-skip-tls-verify',
    raw: { upstream: ['1.1.1.1:1'] },
    want: /^--health-check readyz: give --ca-file FILE .* or, to skip verification, --insecure-skip-tls-verify/,
  },
  {
    name: 'a tls check in the file without a CA',
    raw: { frontends: [{ name: 'a', listen: ['127.0.0.1:1'], upstreams: ['1.1.1.1:1'], healthCheck: { type: 'tls' } }] },
    want: /^frontends\[0\]\.healthCheck \(type tls\): give --ca-file/,
  },
];

test('a tcp check needs no CA; a CA or the explicit opt-out satisfies a TLS check', () => {
  assert.equal(checkProxyConfig(parse({ upstream: ['1.1.1.1:1'], healthCheck: 'tcp' })), undefined);
  assert.equal(checkProxyConfig(parse({ upstream: ['1.1.1.1:1'], caFile: '/ca.crt' })), undefined);
  assert.equal(checkProxyConfig(parse({ upstream: ['1.1.1.1:1'], insecureSkipTlsVerify: true })), undefined);
});

test('durations, ports and paths out of their range are refused by the schema', () => {
  for (const bad of [
    { interval: '1000h' },
    { timeout: '6m' },
    { upstream: ['127.0.0.1:0'] },
    { upstream: ['[fe80::1%eth0]:6443'] },
    { caFile: 'a\nb' },
    { maxConnections: 0 },
    { shutdownGrace: '2h' },
  ]) {
    assert.equal(schema.safeParse(bad).success, false, JSON.stringify(bad));
  }
});

for (const p of problems) {
  test(`a config with ${p.name} is refused with the key named`, () => {
    assert.match(checkProxyConfig(parse(p.raw)) ?? 'accepted', p.want);
  });
}

test('port 0 (tests, ephemeral) may repeat', () => {
  assert.equal(checkProxyConfig(parse({ listen: ['127.0.0.1:0', '127.0.0.1:0'], upstream: ['1.1.1.1:1'], insecureSkipTlsVerify: true })), undefined);
});

test('the schema refuses an unknown check type and unknown keys; a frontend with no upstream and no DNS name is refused by name', () => {
  assert.equal(schema.safeParse({ healthCheck: 'http' }).success, false);
  assert.match(
    checkProxyConfig(parse({ frontends: [{ name: 'a', listen: ['127.0.0.1:1'], upstreams: [] }], healthCheck: 'tcp' })) ?? '',
    /^frontends\[0\]\.upstreams: list at least one upstream HOST:PORT, or NAME:PORT under upstreamDns$/,
  );
  assert.equal(
    checkProxyConfig(parse({ frontends: [{ name: 'a', listen: ['127.0.0.1:1'], upstreamDns: ['api.cluster.test:6443'] }], healthCheck: 'tcp' })),
    undefined,
  );
  for (const bad of ['10.0.0.1:6443', '[::1]:6443', 'api.cluster.test', 'api..test:6443', 'api.test:0', 'a b:6443'])
    assert.equal(schema.safeParse({ upstreamDns: [bad] }).success, false, bad);
  assert.equal(
    schema.safeParse({ frontends: [{ name: 'a', listen: ['127.0.0.1:1'], upstreams: ['1.1.1.1:1'], healthCheck: { kind: 'tcp' } }] }).success,
    false,
  );
});

test('relay takes handle, socket or native and nothing else (the data path, --relay)', () => {
  assert.equal(parse({ relay: 'handle' }).relay, 'handle');
  assert.equal(parse({ relay: 'socket' }).relay, 'socket');
  assert.equal(parse({ relay: 'native' }).relay, 'native');
  assert.equal(parse({}).relay, undefined, 'absent: the proxy picks handle, or socket when it cannot');
  fc.assert(
    fc.property(
      fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)).filter((v) => v !== 'handle' && v !== 'socket' && v !== 'native'),
      (bad) => {
        const r = schema.safeParse({ relay: bad });
        return !r.success && /expected handle, socket or native/.test(r.error.issues[0]!.message);
      },
    ),
  );
});
