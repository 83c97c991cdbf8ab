import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalIp } from '../base/ip.ts';
import { upstreamsFromEndpoints, upstreamsFromEndpointSlices, type EndpointSliceLike, type EndpointsLike } from './endpoint-upstreams.ts';

/** The dialable list only (the tests of what is rejected are below). */
const up = {
  upstreamsFromEndpointSlices: (s: readonly EndpointSliceLike[]) => upstreamsFromEndpointSlices(s).upstreams,
  upstreamsFromEndpoints: (o: readonly EndpointsLike[]) => upstreamsFromEndpoints(o).upstreams,
};

const slice = (over: Partial<EndpointSliceLike> = {}): EndpointSliceLike => ({
  metadata: { name: 'kubernetes', namespace: 'default', labels: { 'kubernetes.io/service-name': 'kubernetes' } },
  addressType: 'IPv4',
  endpoints: [{ addresses: ['10.0.0.12'], conditions: { ready: true } }, { addresses: ['10.0.0.11'] }],
  ports: [{ name: 'https', port: 6443, protocol: 'TCP' }],
  ...over,
});

test('slices give their ready endpoints on the https port, sorted and without duplicates', () => {
  const two = slice({
    metadata: { name: 'kubernetes-2', labels: { 'kubernetes.io/service-name': 'kubernetes' } },
    endpoints: [{ addresses: ['10.0.0.11'] }, { addresses: ['10.0.0.13'], conditions: { ready: false } }],
  });
  assert.deepEqual(up.upstreamsFromEndpointSlices([slice(), two]), [
    { host: '10.0.0.11', port: 6443 },
    { host: '10.0.0.12', port: 6443 },
  ]);
});

test('slices of other services, FQDN slices and slices without a usable port are ignored', () => {
  assert.deepEqual(
    up.upstreamsFromEndpointSlices([
      slice({ metadata: { name: 'x', labels: { 'kubernetes.io/service-name': 'other' } } }),
      slice({ addressType: 'FQDN' }),
      slice({
        ports: [
          { name: 'a', port: 1 },
          { name: 'b', port: 2 },
        ],
      }),
      slice({ ports: [{ name: 'https', port: 6443, protocol: 'UDP' }] }),
    ]),
    [],
  );
});

test('a single unnamed TCP port is used', () => {
  assert.deepEqual(up.upstreamsFromEndpointSlices([slice({ ports: [{ port: 8443 }], endpoints: [{ addresses: ['fd00::1'] }], addressType: 'IPv6' })]), [
    { host: 'fd00::1', port: 8443 },
  ]);
});

test('an empty or missing endpoint list gives an empty list (the caller ignores it)', () => {
  assert.deepEqual(up.upstreamsFromEndpointSlices([slice({ endpoints: null })]), []);
  assert.deepEqual(up.upstreamsFromEndpointSlices([]), []);
});

test('the Endpoints object gives its ready addresses on the https port', () => {
  const ep = { metadata: { name: 'kubernetes' }, subsets: [{ addresses: [{ ip: '10.0.0.2' }, { ip: '10.0.0.1' }], ports: [{ name: 'https', port: 6443 }] }] };
  assert.deepEqual(up.upstreamsFromEndpoints([ep, { metadata: { name: 'other' }, subsets: ep.subsets }]), [
    { host: '10.0.0.1', port: 6443 },
    { host: '10.0.0.2', port: 6443 },
  ]);
  assert.deepEqual(up.upstreamsFromEndpoints([{ metadata: { name: 'kubernetes' }, subsets: null }]), []);
});

test("only canonical addresses of the slice's family are dialled; the rest is reported, as written", () => {
  const got = upstreamsFromEndpointSlices([
    slice({ endpoints: [{ addresses: ['10.0.0.1', 'apiserver.example', '10.0.0.1\nX', 'fd00::1', '010.0.0.2', ''] }] }),
    slice({ addressType: 'IPv6', endpoints: [{ addresses: ['FD00:0:0::2', 'fe80::1%eth0', '10.0.0.3'] }] }),
  ]);
  assert.deepEqual(got.upstreams, [
    { host: '10.0.0.1', port: 6443 },
    { host: 'fd00::2', port: 6443 },
  ]);
  assert.deepEqual(got.rejected, ['apiserver.example', '10.0.0.1\nX', 'fd00::1', '010.0.0.2', '', 'fe80::1%eth0', '10.0.0.3']);
});

test('two spellings of one address are one upstream', () => {
  const got = upstreamsFromEndpointSlices([slice({ addressType: 'IPv6', endpoints: [{ addresses: ['fd00::0:1', 'FD00::1'] }] })]);
  assert.deepEqual(got.upstreams, [{ host: 'fd00::1', port: 6443 }]);
});

test('a port outside 1-65535 is no port: the subset is left out and reported', () => {
  const ep = (port: number) => ({ metadata: { name: 'kubernetes' }, subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ name: 'https', port }] }] });
  for (const port of [0, 65536, 1.5, -443]) {
    const got = upstreamsFromEndpoints([ep(port)]);
    assert.deepEqual(got.upstreams, [], `port ${port}`);
    assert.deepEqual(got.rejected, [`port ${port}`]);
  }
  assert.deepEqual(upstreamsFromEndpoints([ep(65535)]).upstreams, [{ host: '10.0.0.1', port: 65535 }]);
});

test('the rejected list is bounded in entries and length (a hostile object is not a huge log line)', () => {
  const got = upstreamsFromEndpointSlices([slice({ endpoints: [{ addresses: Array.from({ length: 50 }, (_, i) => `${'x'.repeat(100)}${i}`) }] })]);
  assert.equal(got.rejected.length, 10);
  assert.ok(got.rejected.every((r) => r.length <= 65));
});

test("property: whatever the addresses, every upstream is a canonical address of its slice's family on a valid port", () => {
  const address = fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), fc.string({ maxLength: 50 }), fc.domain());
  fc.assert(
    fc.property(fc.constantFrom('IPv4', 'IPv6'), fc.array(address, { maxLength: 8 }), fc.integer({ min: -10, max: 70000 }), (addressType, addresses, port) => {
      const got = upstreamsFromEndpointSlices([slice({ addressType, ports: [{ name: 'https', port }], endpoints: [{ addresses }] })]);
      for (const u of got.upstreams) {
        assert.equal(canonicalIp(u.host), u.host);
        assert.equal(u.host.includes(':'), addressType === 'IPv6');
        assert.ok(Number.isInteger(u.port) && u.port >= 1 && u.port <= 65535);
      }
      assert.ok(got.upstreams.length + got.rejected.length >= Math.min(1, addresses.length) || port < 1 || port > 65535);
    }),
  );
});
