// Finding a service's endpoint in a Keystone v3 catalog by type (with the official aliases), region
// and interface. Pure.
import { KubewardError } from '../../base/errors.ts';
import type { CatalogEntry } from './openstack-types.ts';
import type { EndpointInterface } from './cloud-config.ts';

export type ServiceType = 'identity' | 'compute' | 'network' | 'block-storage' | 'load-balancer' | 'image';

/** Catalog type names per service, preferred first (service-types-authority aliases). */
const TYPE_ALIASES: Record<ServiceType, string[]> = {
  identity: ['identity'],
  compute: ['compute'],
  network: ['network'],
  'block-storage': ['block-storage', 'volumev3', 'volume', 'block-store'],
  'load-balancer': ['load-balancer'],
  image: ['image'],
};

/** The version path a client speaks when the catalog URL has none (Neutron and Octavia list bare roots). */
const VERSION_SUFFIX: Partial<Record<ServiceType, string>> = { network: '/v2.0', 'load-balancer': '/v2' };

export interface EndpointQuery {
  service: ServiceType;
  interface: EndpointInterface;
  /** Any region when absent. */
  region?: string;
}

/** The endpoint's base URL without a trailing slash, with the API version path added where needed. */
export function findEndpoint(catalog: CatalogEntry[], q: EndpointQuery, offered?: string): string {
  for (const type of TYPE_ALIASES[q.service]) {
    const entry = catalog.find((e) => e.type === type);
    if (!entry) continue;
    const ep = entry.endpoints.find((e) => answers(e, q));
    if (ep) return withVersion(q.service, ep.url.replace(/\/+$/, ''));
  }
  throw new KubewardError(
    'E_NOT_FOUND',
    `no ${q.service} endpoint with interface ${q.interface}${q.region ? ` in region ${q.region}` : ''} in the service catalog (it has: ${(offered ?? catalogOffers(catalog)) || 'nothing'})`,
  );
}

/** An endpoint of the query's interface and, when it names one, its region: what findEndpoint may pick and keptCatalog keeps. */
function answers(ep: CatalogEntry['endpoints'][number], q: Omit<EndpointQuery, 'service'>): boolean {
  return ep.interface === q.interface && (q.region === undefined || (ep.region_id ?? ep.region) === q.region);
}

/** What a catalog offers, for an error message: type/interface/region of every endpoint. */
export function catalogOffers(catalog: CatalogEntry[]): string {
  return catalog.flatMap((e) => e.endpoints.map((ep) => `${e.type}/${ep.interface}/${ep.region_id ?? ep.region ?? '-'}`)).join(', ');
}

/**
 * The catalog a client keeps for a token's lifetime: only the endpoints it can ever pick (its
 * interface, its region when it has one), with every string interned (the same URLs recur in every
 * project's catalog of a region; the operator keeps one catalog per cluster). Entries keep
 * their type even with no endpoint left, for callers that ask whether a service exists.
 */
export function keptCatalog(catalog: CatalogEntry[], q: Omit<EndpointQuery, 'service'>, intern: (s: string) => string = (s) => s): CatalogEntry[] {
  return catalog.map((e) => ({
    type: intern(e.type),
    endpoints: (e.endpoints ?? [])
      .filter((ep) => answers(ep, q))
      .map((ep) => {
        const kept: CatalogEntry['endpoints'][number] = { interface: ep.interface, url: intern(ep.url) };
        if (ep.region !== undefined) kept.region = intern(ep.region);
        if (ep.region_id !== undefined) kept.region_id = intern(ep.region_id);
        return kept;
      }),
  }));
}

function withVersion(service: ServiceType, url: string): string {
  const suffix = VERSION_SUFFIX[service];
  if (!suffix || /\/v\d+(\.\d+)?$/.test(url)) return url;
  return url + suffix;
}
