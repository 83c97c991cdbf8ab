// Version discovery documents, so keystoneauth (the openstack CLI) can find each emulated service.
import type { ServiceName } from './http-kit.ts';
import { NOVA_MAX_MICROVERSION } from './nova-api.ts';

/** The body for GET on a service root (rest === '') or its version root, or undefined for other paths. */
export function versionDoc(service: ServiceName, base: string, version: string | undefined): unknown {
  const self = (p: string) => [{ rel: 'self', href: `${base}/${p}` }];
  const media = [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }];
  const nova = {
    id: 'v2.1',
    status: 'CURRENT',
    version: NOVA_MAX_MICROVERSION.join('.'),
    min_version: '2.1',
    updated: '2013-07-23T11:33:21Z',
    links: self('compute/v2.1/'),
  };
  switch (service) {
    case 'identity': {
      const v3 = { id: 'v3.14', status: 'stable', updated: '2020-04-07T00:00:00Z', links: self('identity/v3/'), 'media-types': media };
      return version ? { version: v3 } : { versions: { values: [v3] } };
    }
    case 'compute':
      return version ? { version: nova } : { versions: [nova] };
    case 'network':
      return version
        ? {
            resources: ['networks', 'subnets', 'ports', 'routers', 'security-groups', 'security-group-rules', 'floatingips'].map((r) => ({
              name: r,
              collection: r,
              links: self(`network/v2.0/${r}`),
            })),
          }
        : { versions: [{ id: 'v2.0', status: 'CURRENT', links: self('network/v2.0/') }] };
    case 'volume':
      return { versions: [{ id: 'v3.0', status: 'CURRENT', version: '3.70', min_version: '3.0', updated: '2022-08-31T00:00:00Z', links: self('volume/v3/') }] };
    case 'load-balancer':
      return {
        versions: [
          { id: 'v2.0', status: 'SUPPORTED', updated: '2016-12-11T00:00:00Z', links: self('load-balancer/v2.0') },
          { id: 'v2', status: 'CURRENT', updated: '2022-08-19T00:00:00Z', links: self('load-balancer/v2') },
        ],
      };
    case 'image':
      return { versions: [{ id: 'v2.9', status: 'CURRENT', links: self('image/v2/') }] };
  }
}

/** The version path segment each service answers under. */
export const VERSION_SEGMENTS: Record<ServiceName, string[]> = {
  identity: ['v3'],
  compute: ['v2.1'],
  network: ['v2.0'],
  volume: ['v3'],
  'load-balancer': ['v2', 'v2.0'],
  image: ['v2'],
};
