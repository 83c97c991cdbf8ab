import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findEndpoint } from './service-catalog.ts';
import type { CatalogEntry } from './openstack-types.ts';

const ep = (iface: 'public' | 'internal' | 'admin', region: string, url: string) => ({ interface: iface, region_id: region, region, url });
const CATALOG: CatalogEntry[] = [
  { type: 'network', endpoints: [ep('public', 'R1', 'http://n1:9696/'), ep('internal', 'R1', 'http://n1-int:9696'), ep('public', 'R2', 'http://n2:9696')] },
  { type: 'volumev3', endpoints: [ep('public', 'R1', 'http://c:8776/v3/p1')] },
  { type: 'load-balancer', endpoints: [ep('public', 'R1', 'http://o:9876')] },
  { type: 'compute', endpoints: [ep('public', 'R1', 'http://nova:8774/v2.1')] },
];

const CASES: [string, Parameters<typeof findEndpoint>[1], string][] = [
  ['network gets /v2.0 appended and the trailing slash dropped', { service: 'network', interface: 'public', region: 'R1' }, 'http://n1:9696/v2.0'],
  ['the interface selects the internal endpoint', { service: 'network', interface: 'internal', region: 'R1' }, 'http://n1-int:9696/v2.0'],
  ['the region selects R2', { service: 'network', interface: 'public', region: 'R2' }, 'http://n2:9696/v2.0'],
  ['block-storage is found under its alias volumev3, URL kept', { service: 'block-storage', interface: 'public' }, 'http://c:8776/v3/p1'],
  ['load-balancer gets /v2', { service: 'load-balancer', interface: 'public' }, 'http://o:9876/v2'],
  ['compute keeps its versioned URL', { service: 'compute', interface: 'public' }, 'http://nova:8774/v2.1'],
];
for (const [name, q, url] of CASES) test(`catalog lookup: ${name}`, () => assert.equal(findEndpoint(CATALOG, q), url));

test('a missing endpoint is E_NOT_FOUND listing what the catalog offers', () => {
  assert.throws(
    () => findEndpoint(CATALOG, { service: 'network', interface: 'admin', region: 'R1' }),
    (err: Error & { code?: string }) =>
      err.code === 'E_NOT_FOUND' && /no network endpoint with interface admin in region R1/.test(err.message) && /network\/internal\/R1/.test(err.message),
  );
});
