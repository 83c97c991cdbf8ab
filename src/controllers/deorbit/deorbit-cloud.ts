// The narrow view of OpenStack that deorbit needs, and its adapter on kubeward's OpenStack client.
import type { OpenStackClient } from '../../clients/openstack/openstack-client.ts';
import type { CloudFloatingIp, CloudLoadBalancer, CloudVolume } from './deorbit-types.ts';

export interface DeorbitCloud {
  /** Every Cinder volume of the project, all pages. */
  listVolumes(signal?: AbortSignal): Promise<CloudVolume[]>;
  /** Every Octavia load balancer of the project; undefined when the cloud has no load-balancer service. */
  listLoadBalancers(signal?: AbortSignal): Promise<CloudLoadBalancer[] | undefined>;
  listFloatingIps(signal?: AbortSignal): Promise<CloudFloatingIp[]>;
}

export function openStackDeorbitCloud(os: OpenStackClient): DeorbitCloud {
  return {
    listVolumes: async (signal) => (await os.cinder.listVolumes({}, { signal })).map((v) => ({ id: v.id, status: v.status })),
    listLoadBalancers: async (signal) => {
      const info = await os.keystone.tokenInfo({ signal });
      if (!info.catalog.some((e) => e.type === 'load-balancer')) return undefined;
      const lbs = await os.octavia.listLoadBalancers({}, { signal });
      return lbs.map((lb) => ({ id: lb.id, name: lb.name, provisioningStatus: lb.provisioning_status, vipPortId: lb.vip_port_id }));
    },
    listFloatingIps: async (signal) => (await os.neutron.listFloatingIps({}, { signal })).map((f) => ({ id: f.id, portId: f.port_id })),
  };
}
