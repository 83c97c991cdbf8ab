// routegc's view of OpenStack on kubeward's client: the router and every server of the project.
import type { OpenStackClient } from '../../clients/openstack/openstack-client.ts';
import { toClusterInstance } from '../managed-cluster/cluster-adapters.ts';
import type { ClusterRead } from '../managed-cluster/round-reads.ts';
import type { RouteGcCloud } from './routegc-cycle.ts';

export function openStackRouteGcCloud(os: OpenStackClient): RouteGcCloud {
  return {
    getRouter: (id, signal) => os.neutron.getRouter(id, { signal }),
    listServers: async (signal) => (await os.nova.listServers({}, { signal })).map(toClusterInstance),
  };
}

/** The router and servers read once per cluster and round with flight (round-reads.ts). */
export function sharedRouteGcCloud(own: RouteGcCloud, read: ClusterRead): RouteGcCloud {
  return {
    getRouter: (id, signal) => read(`router/${id}`, () => own.getRouter(id, signal), signal),
    listServers: (signal) => read('servers', () => own.listServers(signal), signal),
  };
}
