// The narrow view of OpenStack that deorbit needs, and its adapter on kubeward's OpenStack client.
// Absence from a list is confirmed by asking for the object itself (a 404), so a list that is
// well-formed but short (a policy or scope change, a partial answer) never makes a volume "gone".
import type { OpenStackClient } from '../../clients/openstack/openstack-client.ts';
import type { CloudFloatingIp, CloudLoadBalancer, CloudVolume } from './deorbit-types.ts';

export interface DeorbitCloud {
  /** Every Cinder volume of the project, all pages. */
  listVolumes(signal?: AbortSignal): Promise<CloudVolume[]>;
  /** Every Octavia load balancer of the project; undefined when the cloud has no load-balancer service. */
  listLoadBalancers(signal?: AbortSignal): Promise<CloudLoadBalancer[] | undefined>;
  listFloatingIps(signal?: AbortSignal): Promise<CloudFloatingIp[]>;
  /** One volume by ID; undefined only when Cinder answers 404. */
  getVolume(id: string, signal?: AbortSignal): Promise<CloudVolume | undefined>;
  /** One load balancer by ID; undefined only when Octavia answers 404 (or the cloud has no Octavia). */
  getLoadBalancer(id: string, signal?: AbortSignal): Promise<CloudLoadBalancer | undefined>;
  /** Cinder's delete of a recorded volume ('absent' on 404); Cinder refuses (400) one in deleting or error_deleting. */
  deleteVolume(id: string, signal?: AbortSignal): Promise<'deleted' | 'absent'>;
  /** Octavia's cascading delete of a proven load balancer ('absent' on 404). */
  deleteLoadBalancer(id: string, signal?: AbortSignal): Promise<'deleted' | 'absent'>;
}

const lbView = (lb: { id: string; name: string; provisioning_status: string; vip_port_id?: string; created_at?: string }): CloudLoadBalancer => {
  const created = lb.created_at ? Date.parse(lb.created_at.endsWith('Z') || /[+-]\d\d:?\d\d$/.test(lb.created_at) ? lb.created_at : `${lb.created_at}Z`) : NaN;
  return {
    id: lb.id,
    name: lb.name,
    provisioningStatus: lb.provisioning_status,
    vipPortId: lb.vip_port_id,
    createdMs: Number.isNaN(created) ? undefined : created,
  };
};

export function openStackDeorbitCloud(os: OpenStackClient): DeorbitCloud {
  return {
    listVolumes: async (signal) => (await os.cinder.listVolumes({}, { signal })).map((v) => ({ id: v.id, status: v.status })),
    listLoadBalancers: async (signal) => {
      const info = await os.keystone.tokenInfo({ signal });
      if (!info.catalog.some((e) => e.type === 'load-balancer')) return undefined;
      const lbs = await os.octavia.listLoadBalancers({}, { signal });
      return lbs.map(lbView);
    },
    listFloatingIps: async (signal) => (await os.neutron.listFloatingIps({}, { signal })).map((f) => ({ id: f.id, portId: f.port_id })),
    getVolume: async (id, signal) => {
      const v = await os.cinder.getVolume(id, { signal });
      return v && { id: v.id, status: v.status };
    },
    getLoadBalancer: async (id, signal) => {
      const info = await os.keystone.tokenInfo({ signal });
      if (!info.catalog.some((e) => e.type === 'load-balancer')) return undefined;
      const lb = await os.octavia.getLoadBalancer(id, { signal });
      return lb && lbView(lb);
    },
    deleteVolume: (id, signal) => os.cinder.deleteVolume(id, { signal }),
    deleteLoadBalancer: (id, signal) => os.octavia.deleteLoadBalancer(id, { signal, cascade: true }),
  };
}
