import { test } from 'node:test';
import assert from 'node:assert/strict';
import { upstreamsFromEndpoints, upstreamsFromEndpointSlices, type EndpointSliceLike } from './endpoint-upstreams.ts';

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
  assert.deepEqual(upstreamsFromEndpointSlices([slice(), two]), [
    { host: '10.0.0.11', port: 6443 },
    { host: '10.0.0.12', port: 6443 },
  ]);
});

test('slices of other services, FQDN slices and slices without a usable port are ignored', () => {
  assert.deepEqual(
    upstreamsFromEndpointSlices([
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
  assert.deepEqual(upstreamsFromEndpointSlices([slice({ ports: [{ port: 8443 }], endpoints: [{ addresses: ['fd00::1'] }], addressType: 'IPv6' })]), [
    { host: 'fd00::1', port: 8443 },
  ]);
});

test('an empty or missing endpoint list gives an empty list (the caller ignores it)', () => {
  assert.deepEqual(upstreamsFromEndpointSlices([slice({ endpoints: null })]), []);
  assert.deepEqual(upstreamsFromEndpointSlices([]), []);
});

test('the Endpoints object gives its ready addresses on the https port', () => {
  const ep = { metadata: { name: 'kubernetes' }, subsets: [{ addresses: [{ ip: '10.0.0.2' }, { ip: '10.0.0.1' }], ports: [{ name: 'https', port: 6443 }] }] };
  assert.deepEqual(upstreamsFromEndpoints([ep, { metadata: { name: 'other' }, subsets: ep.subsets }]), [
    { host: '10.0.0.1', port: 6443 },
    { host: '10.0.0.2', port: 6443 },
  ]);
  assert.deepEqual(upstreamsFromEndpoints([{ metadata: { name: 'kubernetes' }, subsets: null }]), []);
});
