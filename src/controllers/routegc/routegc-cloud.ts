// routegc's view of OpenStack on kubeward's client: the router and every server of the project.
import type { OpenStackClient } from '../../clients/openstack/openstack-client.ts';
import { toClusterInstance } from '../managed-cluster/cluster-adapters.ts';
import type { RouteGcCloud } from './routegc-cycle.ts';

export function openStackRouteGcCloud(os: OpenStackClient): RouteGcCloud {
  return {
    getRouter: (id, signal) => os.neutron.getRouter(id, { signal }),
    listServers: async (signal) => (await os.nova.listServers({}, { signal })).map(toClusterInstance),
  };
}
