// routegc's view of OpenStack on kubeward's client: the router, every server of the project, and the
// addresses ports on the router's networks hold.
import { ipKey, parseCidr, ipBits } from '../../base/ip.ts';
import type { OpenStackClient } from '../../clients/openstack/openstack-client.ts';
import type { Port } from '../../clients/openstack/openstack-types.ts';
import { toClusterInstance } from '../managed-cluster/cluster-adapters.ts';
import type { RouteGcCloud } from './routegc-cycle.ts';

export function openStackRouteGcCloud(os: OpenStackClient): RouteGcCloud {
  return {
    getRouter: (id, signal) => os.neutron.getRouter(id, { signal }),
    listServers: async (signal) => (await os.nova.listServers({}, { signal })).map(toClusterInstance),
    heldAddresses: async (routerId, signal) => {
      // The router's interfaces name its networks. When none is visible (an interface another project
      // attached), every port these credentials see counts: more protection, never less.
      const interfaces = await os.neutron.listPorts({ deviceId: routerId }, { signal });
      const networks = [...new Set(interfaces.map((p) => p.network_id))];
      const ports = networks.length
        ? (await Promise.all(networks.map((networkId) => os.neutron.listPorts({ networkId }, { signal })))).flat()
        : await os.neutron.listPorts({}, { signal });
      return heldAddressesOf(ports, routerId);
    },
  };
}

/**
 * Addresses (ipKey form) ports hold, whoever owns them and whatever their status: fixed IPs, and
 * allowed address pairs of one address (a VIP keepalived moves between servers). The router's own
 * ports are left out: Neutron refuses a route via the router's own address anyway.
 */
export function heldAddressesOf(ports: readonly Port[], routerId: string): Set<string> {
  const held = new Set<string>();
  for (const p of ports) {
    if (p.device_id === routerId) continue;
    for (const f of p.fixed_ips ?? []) held.add(ipKey(f.ip_address));
    for (const pair of p.allowed_address_pairs ?? []) {
      const c = pair.ip_address.includes('/') ? parseCidr(pair.ip_address) : undefined;
      if (!pair.ip_address.includes('/')) held.add(ipKey(pair.ip_address));
      else if (c && c.prefix === ipBits(c.family)) held.add(ipKey(pair.ip_address.slice(0, pair.ip_address.indexOf('/'))));
    }
  }
  return held;
}
