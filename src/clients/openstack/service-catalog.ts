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
export function findEndpoint(catalog: CatalogEntry[], q: EndpointQuery): string {
  for (const type of TYPE_ALIASES[q.service]) {
    const entry = catalog.find((e) => e.type === type);
    if (!entry) continue;
    const ep = entry.endpoints.find((e) => e.interface === q.interface && (q.region === undefined || (e.region_id ?? e.region) === q.region));
    if (ep) return withVersion(q.service, ep.url.replace(/\/+$/, ''));
  }
  const offered = catalog.flatMap((e) => e.endpoints.map((ep) => `${e.type}/${ep.interface}/${ep.region_id ?? ep.region ?? '-'}`)).join(', ');
  throw new KubewardError(
    'E_NOT_FOUND',
    `no ${q.service} endpoint with interface ${q.interface}${q.region ? ` in region ${q.region}` : ''} in the service catalog (it has: ${offered || 'nothing'})`,
  );
}

function withVersion(service: ServiceType, url: string): string {
  const suffix = VERSION_SUFFIX[service];
  if (!suffix || /\/v\d+(\.\d+)?$/.test(url)) return url;
  return url + suffix;
}
