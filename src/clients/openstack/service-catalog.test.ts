import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { catalogOffers, findEndpoint, keptCatalog } from './service-catalog.ts';
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

test('the kept catalog answers every lookup of its interface and region as the whole catalog does, and holds nothing else', () => {
  const services = ['network', 'block-storage', 'load-balancer', 'compute', 'image'] as const;
  const lookup = (c: CatalogEntry[], q: Parameters<typeof findEndpoint>[1]) => {
    try {
      return findEndpoint(c, q);
    } catch (err) {
      return (err as { code?: string }).code;
    }
  };
  for (const iface of ['public', 'internal', 'admin'] as const)
    for (const region of ['R1', 'R2', undefined]) {
      const kept = keptCatalog(CATALOG, { interface: iface, region });
      assert.deepEqual(
        kept.map((e) => e.type),
        CATALOG.map((e) => e.type),
        'every entry keeps its type',
      );
      for (const e of kept)
        for (const x of e.endpoints) assert.ok(x.interface === iface && (region === undefined || x.region_id === region), JSON.stringify(x));
      for (const service of services) assert.equal(lookup(kept, { service, interface: iface, region }), lookup(CATALOG, { service, interface: iface, region }));
    }
});

test('a lookup in the kept catalog that misses still lists what the whole catalog offered', () => {
  const kept = keptCatalog(CATALOG, { interface: 'admin', region: 'R1' });
  assert.throws(
    () => findEndpoint(kept, { service: 'network', interface: 'admin', region: 'R1' }, catalogOffers(CATALOG)),
    (err: Error & { code?: string }) => err.code === 'E_NOT_FOUND' && /network\/internal\/R1/.test(err.message) && /compute\/public\/R1/.test(err.message),
  );
});

test('kept catalogs of random catalogs: endpoints only of the interface and region, in their order', () => {
  const iface = fc.constantFrom('public', 'internal', 'admin') as fc.Arbitrary<'public' | 'internal' | 'admin'>;
  const endpoint = fc.record({ interface: iface, region: fc.constantFrom('R1', 'R2'), url: fc.webUrl() }).map((e) => ({ ...e, region_id: e.region }));
  const catalog = fc.array(fc.record({ type: fc.constantFrom('network', 'compute', 'image', 'volumev3'), endpoints: fc.array(endpoint, { maxLength: 6 }) }), {
    maxLength: 6,
  });
  fc.assert(
    fc.property(catalog, iface, fc.option(fc.constantFrom('R1', 'R2'), { nil: undefined }), (c, i, r) => {
      const kept = keptCatalog(c, { interface: i, region: r });
      assert.equal(kept.length, c.length);
      kept.forEach((e, k) =>
        assert.deepEqual(
          e.endpoints.map((x) => x.url),
          c[k]!.endpoints.filter((x) => x.interface === i && (r === undefined || x.region === r)).map((x) => x.url),
        ),
      );
    }),
  );
});
