// Pure rules about LoadBalancer Services and their Octavia load balancers: which Services deorbit
// deletes, which load balancers are proven to be the cluster's, and when the wait for them is over.
// A load balancer is the cluster's only by an exact identity, never by a name prefix (the prefix
// kube_service_k1_ also matches cluster k1_x): the ID the cloud controller annotated on a Service
// we saw when the load balancer carries that Service's name, the exact name it gives a Service we
// saw, or its legacy name (from the Service's UID). A reused load balancer is never the cluster's.
import type { Service } from '../../clients/kube/kube-types.ts';
import type { CloudFloatingIp, CloudLoadBalancer, SeenService } from './deorbit-types.ts';

/**
 * The annotation cloud-provider-openstack writes with the Octavia load balancer's ID
 * (ServiceAnnotationLoadBalancerID in kubernetes/cloud-provider-openstack pkg/openstack/loadbalancer.go).
 */
export const LB_ID_ANNOTATION = 'loadbalancer.openstack.org/load-balancer-id';

/**
 * OCCM's --cluster-name when nobody set one. Every cloud controller left on its defaults names its load
 * balancers kube_service_kubernetes_<ns>_<svc>, so in a shared project that name proves nothing.
 */
export const SHARED_DEFAULT_CLUSTER_NAME = 'kubernetes';

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

export function seenLoadBalancerServices(services: Service[]): SeenService[] {
  return services.filter(isLoadBalancerService).map((s) => ({ namespace: s.metadata.namespace ?? '', name: s.metadata.name, uid: s.metadata.uid }));
}

/** OCCM's name: lbFormat "%s%s_%s_%s" (kube_service_ + cluster, namespace, service), cut at 255 (Sprintf255). */
export function loadBalancerName(clusterName: string, s: SeenService): string {
  return `kube_service_${clusterName}_${s.namespace}_${s.name}`.slice(0, 255);
}

/** The pre-1.x name (k8s.io/cloud-provider DefaultLoadBalancerName): "a" + the Service UID without dashes, 32 chars. */
export function legacyLoadBalancerName(s: SeenService): string | undefined {
  return s.uid ? `a${s.uid.replaceAll('-', '')}`.slice(0, 32) : undefined;
}

/**
 * Annotated load balancer IDs split by what the load balancer is called. OCCM names what it creates
 * for a Service (or, long ago, by the Service's UID); a load balancer the Service was pointed at to
 * reuse (OCCM's documented sharing) keeps its own name, and OCCM leaves it in place on deletion. Only
 * the first kind is the cluster's: the others are never waited on, deleted, or listed as debris.
 * An annotated ID the cloud does not list is in neither (nothing to wait for).
 */
export function judgeAnnotatedIds(services: Service[], lbs: readonly CloudLoadBalancer[], clusterName: string): { created: string[]; reused: string[] } {
  const byId = new Map(lbs.map((lb) => [lb.id, lb]));
  const created = new Set<string>();
  const reused = new Set<string>();
  for (const svc of services.filter(isLoadBalancerService)) {
    const id = svc.metadata.annotations?.[LB_ID_ANNOTATION];
    const lb = id ? byId.get(id) : undefined;
    if (!lb) continue;
    const seen: SeenService = { namespace: svc.metadata.namespace ?? '', name: svc.metadata.name, uid: svc.metadata.uid };
    (lb.name === loadBalancerName(clusterName, seen) || lb.name === legacyLoadBalancerName(seen) ? created : reused).add(lb.id);
  }
  return { created: [...created].sort(), reused: [...reused].filter((id) => !created.has(id)).sort() };
}

/** Whether the cluster name can tell our load balancers from another cluster's. */
export function isClusterNameDistinct(clusterName: string): boolean {
  return clusterName !== '' && clusterName !== SHARED_DEFAULT_CLUSTER_NAME;
}

export interface LoadBalancerMatch {
  /** Proven the cluster's and not yet deleted. */
  ours: CloudLoadBalancer[];
  /** Names that more than one load balancer carries: another cluster may use the same name; left alone. */
  ambiguous: string[];
}

/**
 * The cluster's Octavia load balancers that still exist. By annotated ID always; by OCCM's exact name
 * only when the cluster name is distinct; by legacy (UID) name always. A name two load balancers
 * carry proves nothing and is reported instead.
 */
export function matchLoadBalancers(
  lbs: CloudLoadBalancer[],
  clusterName: string,
  seen: readonly SeenService[],
  knownIds: readonly string[],
): LoadBalancerMatch {
  const live = lbs.filter((lb) => lb.provisioningStatus !== 'DELETED');
  const names = new Set<string>();
  for (const s of seen) {
    if (isClusterNameDistinct(clusterName)) names.add(loadBalancerName(clusterName, s));
    const legacy = legacyLoadBalancerName(s);
    if (legacy) names.add(legacy);
  }
  const count = new Map<string, number>();
  for (const lb of live) count.set(lb.name, (count.get(lb.name) ?? 0) + 1);
  const ambiguous = [...names].filter((n) => (count.get(n) ?? 0) > 1).sort();
  const known = new Set(knownIds);
  const ours = live.filter((lb) => known.has(lb.id) || (names.has(lb.name) && count.get(lb.name) === 1));
  return { ours, ambiguous };
}

/** Floating IPs on the VIP ports of the given load balancers: they outlive a half-deleted LB. */
export function floatingIpsOf(lbs: CloudLoadBalancer[], fips: CloudFloatingIp[]): string[] {
  const ports = new Set(lbs.map((lb) => lb.vipPortId).filter((p): p is string => !!p));
  return fips
    .filter((f) => f.portId !== null && ports.has(f.portId))
    .map((f) => f.id)
    .sort();
}

/** Kubernetes before 1.17 has no Service load-balancer finalizer, so the Service says nothing. */
export function isLegacyVersion(version: string | undefined): boolean {
  if (!version) return false;
  const m = /^v?(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major < 1 || (major === 1 && minor < 17);
}
