// A ManagedCluster's scope as every controller sees it (pure): its name and owner identity in
// OpenStack, its validated cluster CIDR, router, security group and node pools. Written once so the
// identity and scope rules cannot differ between routegc, flight and the termination clean-up.
import { clusterCidrProblem } from './cidr-scope.ts';
import { poolNameProblem, poolPrefix, type ClusterIdentity } from './cluster-identity.ts';
import type { ManagedCluster } from './managed-cluster.ts';
import { ADOPT_OWNER_ANNOTATION, kubernikusClaim, OWNER_METADATA_ANNOTATION, parseAdoptOwners, parseOwnerMetadata } from './provisioner-claims.ts';

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
  /** Why the owner-metadata annotation proves nothing; undefined when it is absent or fine. */
  ownerMetadataProblem?: string;
}

export function scopeOf(mc: ManagedCluster): ClusterScope {
  const name = mc.metadata.name;
  const s = mc.spec;
  const pools = (s.nodePools ?? []).map((p) => p.name);
  const poolProblems = pools.flatMap((p) => poolNameProblem(p) ?? []);
  const good = pools.filter((p) => !poolNameProblem(p)).map((p) => ({ name: p, prefix: poolPrefix(name, p) }));
  const key = `${mc.metadata.namespace ?? 'default'}/${name}`;
  const annotations = mc.metadata.annotations ?? {};
  const owned = parseOwnerMetadata([annotations[OWNER_METADATA_ANNOTATION] ?? ''], name);
  return {
    key,
    clusterName: name,
    // The UID tells two clusters of one name (other namespaces) and a re-created cluster apart; an
    // object without one (never so from an API server) proves nothing by stamp and writes none.
    identity: {
      ownerId: mc.metadata.uid,
      ownerRef: key,
      poolPrefixes: good.map((p) => p.prefix),
      provisionerClaims: [kubernikusClaim(name), ...(owned.claim ? [owned.claim] : [])],
      adoptOwners: parseAdoptOwners([annotations[ADOPT_OWNER_ANNOTATION] ?? '']),
    },
    ownerMetadataProblem: owned.problem && `annotation ${OWNER_METADATA_ANNOTATION}: ${owned.problem}`,
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
