// A ManagedCluster's scope as every controller sees it (pure): its name and owner identity in
// OpenStack, its validated cluster CIDR, router, security group and node pools. Written once so the
// identity and scope rules cannot differ between routegc, flight and the termination clean-up.
import { clusterCidrProblem } from './cidr-scope.ts';
import { poolNameProblem, poolPrefix, type ClusterIdentity } from './cluster-identity.ts';
import type { ManagedCluster } from './managed-cluster.ts';

export interface ClusterScope {
  /** "namespace/name", the queue key and the metrics label. */
  key: string;
  clusterName: string;
  identity: ClusterIdentity;
  clusterCidr?: string;
  /** Why clusterCidr cannot be used (missing, invalid, too wide); undefined when it can. */
  cidrProblem?: string;
  /** spec.forceClusterCIDR: a cluster CIDR far wider than the Nodes' pod CIDRs is accepted. */
  forceClusterCidr: boolean;
  routerId?: string;
  securityGroupName: string;
  /** Pools whose names fit the name grammar; the others are in poolProblems. */
  pools: { name: string; prefix: string }[];
  poolProblems: string[];
}

export function scopeOf(mc: ManagedCluster): ClusterScope {
  const name = mc.metadata.name;
  const s = mc.spec;
  const pools = (s.nodePools ?? []).map((p) => p.name);
  const poolProblems = pools.flatMap((p) => poolNameProblem(p) ?? []);
  const good = pools.filter((p) => !poolNameProblem(p)).map((p) => ({ name: p, prefix: poolPrefix(name, p) }));
  return {
    key: `${mc.metadata.namespace ?? 'default'}/${name}`,
    clusterName: name,
    // The UID tells a re-created cluster of the same name apart; a test object without one falls back to the name.
    identity: { ownerId: mc.metadata.uid ?? `name:${name}`, poolPrefixes: good.map((p) => p.prefix) },
    clusterCidr: s.clusterCIDR,
    cidrProblem: s.clusterCIDR ? clusterCidrProblem(s.clusterCIDR) : 'the spec has no clusterCIDR',
    forceClusterCidr: s.forceClusterCIDR === true,
    routerId: s.openstack?.routerID,
    securityGroupName: s.openstack?.securityGroupName ?? `${name}-sg`,
    pools: good,
    poolProblems,
  };
}

/** The parts of a scope that, when they change, need a new runner (and its memory). */
export function scopeFingerprint(scope: ClusterScope): string {
  return JSON.stringify([scope.identity, scope.clusterCidr, scope.forceClusterCidr, scope.routerId, scope.securityGroupName, scope.pools]);
}
