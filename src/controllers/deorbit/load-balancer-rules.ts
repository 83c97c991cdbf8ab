// Pure rules about LoadBalancer Services and their Octavia load balancers: which Services deorbit
// deletes, which load balancers belong to the cluster, and when the wait for them is over.
import type { Service } from '../../clients/kube/kube-types.ts';
import type { CloudFloatingIp, CloudLoadBalancer } from './deorbit-types.ts';

/** The annotation cloud-provider-openstack writes with the Octavia load balancer's ID. */
export const LB_ID_ANNOTATION = 'loadbalancer.openstack.org/load-balancer-id';

export function isLoadBalancerService(svc: Service): boolean {
  return svc.spec.type === 'LoadBalancer';
}

export function servicesToDelete(services: Service[]): Service[] {
  return services.filter((s) => isLoadBalancerService(s) && !s.metadata.deletionTimestamp);
}

/** Load balancer IDs the cluster's Services name in their annotation. */
export function annotatedLoadBalancerIds(services: Service[]): string[] {
  const ids = services.filter(isLoadBalancerService).map((s) => s.metadata.annotations?.[LB_ID_ANNOTATION]);
  return ids.filter((id): id is string => typeof id === 'string' && id !== '');
}

/**
 * The cluster's Octavia load balancers that still exist: named by OCCM for this cluster
 * (kube_service_<cluster>_<namespace>_<service>) or known by ID from an annotation.
 */
export function clusterLoadBalancers(lbs: CloudLoadBalancer[], clusterName: string, knownIds: readonly string[]): CloudLoadBalancer[] {
  const prefix = `kube_service_${clusterName}_`;
  const known = new Set(knownIds);
  return lbs.filter((lb) => lb.provisioningStatus !== 'DELETED' && (lb.name.startsWith(prefix) || known.has(lb.id)));
}

/** Floating IPs on the VIP ports of the given load balancers: they outlive a half-deleted LB. */
export function floatingIpsOf(lbs: CloudLoadBalancer[], fips: CloudFloatingIp[]): string[] {
  const ports = new Set(lbs.map((lb) => lb.vipPortId).filter((p): p is string => !!p));
  return fips.filter((f) => f.portId !== null && ports.has(f.portId)).map((f) => f.id).sort();
}

/** Kubernetes before 1.17 has no Service load-balancer finalizer, so the Service says nothing. */
export function isLegacyVersion(version: string | undefined): boolean {
  if (!version) return false;
  const m = /^v?(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major < 1 || (major === 1 && minor < 17);
}
