// Which servers of a project are provably one cluster's (pure). Only a proven server may be rebooted,
// deleted, labelled or opened up; a server that merely carries a Node's name is protected (its
// addresses stay valid next hops, its Node keeps it "registered") but never destroyed.
//
// Proofs, strongest first:
// - a Node's spec.providerID names the server's UUID (the cloud controller wrote it);
// - kubeward's owner metadata (OWNER_METADATA_KEY = the cluster's UID) on the server, written by
//   flight when a stronger proof first held. Cluster API tags with the cluster *name*
//   (CAPA `sigs.k8s.io/cluster-api-provider-aws/cluster/<name>=owned`, CAPO's "Created by
//   cluster-api-provider-openstack cluster <name>" descriptions); the UID also tells a deleted and
//   re-created cluster of the same name apart;
// - the pool name grammar `kks-<cluster>-<pool>-<5 random [a-z0-9]>` matched exactly, with pool names
//   that cannot hold the delimiter, so `kks-k1-small-x-abcde` (cluster k1-small, pool x) is never
//   taken for a server of cluster k1's pool small.
// Two candidate servers with one name are reported and both left alone: a name cannot tell them apart.
import type { ClusterInstance, ClusterNode } from './cluster-view.ts';

export const OWNER_METADATA_KEY = 'kubeward:owner';
export const ownerTag = (ownerId: string): string => `kubeward:owner=${ownerId}`;

/** Kubernikus's random suffix: exactly 5 lower-case letters or digits (pkg/util/node.go checks the length). */
const SUFFIX = /^[a-z0-9]{5}$/;
const POOL = /^[a-z0-9]+$/;

export type OwnershipProof = 'provider-id' | 'owner-metadata' | 'name-prefix';

export interface ClusterIdentity {
  /** The ManagedCluster's UID (operator) or "name:<cluster>" (single-cluster commands). */
  ownerId: string;
  /** Pool prefixes "kks-<cluster>-<pool>-", each ending in the delimiter. */
  poolPrefixes: readonly string[];
}

export interface Ownership {
  /** Proven instances by ID, with the proof. Only these may be acted upon destructively. */
  proven: Map<string, OwnershipProof>;
  /** Every server that may be the cluster's: proven ones and those a Node names (for protective uses). */
  candidates: ClusterInstance[];
  /** Names that more than one candidate carries: reported, and those servers are left alone. */
  duplicateNames: string[];
  /** Candidates whose owner metadata names another cluster: never proven. */
  foreignOwned: string[];
}

/** Why a pool name cannot be used in the name grammar, or undefined. */
export function poolNameProblem(pool: string): string | undefined {
  return POOL.test(pool)
    ? undefined
    : `pool name "${pool}" must be lower-case letters and digits only: a "-" in it would make kks-<cluster>-<pool>- names of two clusters collide`;
}

export const poolPrefix = (cluster: string, pool: string): string => `kks-${cluster}-${pool}-`;

/** The name is the prefix plus exactly the random suffix, and the prefix ends with the "-" delimiter. */
export function matchesPoolPrefix(name: string, prefix: string): boolean {
  return prefix.length > 1 && prefix.endsWith('-') && name.startsWith(prefix) && SUFFIX.test(name.slice(prefix.length));
}

export function proveOwnership(servers: readonly ClusterInstance[], nodes: readonly ClusterNode[], id: ClusterIdentity): Ownership {
  const byProvider = new Set(nodes.flatMap((n) => (n.instanceId ? [n.instanceId] : [])));
  const nodeNames = new Set(nodes.map((n) => n.name));
  const proofOf = (s: ClusterInstance): OwnershipProof | undefined => {
    if (byProvider.has(s.id)) return 'provider-id';
    if (s.metadata[OWNER_METADATA_KEY] === id.ownerId) return 'owner-metadata';
    if (id.poolPrefixes.some((p) => matchesPoolPrefix(s.name, p))) return 'name-prefix';
    return undefined;
  };
  const candidates: ClusterInstance[] = [];
  const proofs = new Map<string, OwnershipProof>();
  for (const s of servers) {
    const proof = proofOf(s);
    if (proof === undefined && !(s.name !== '' && nodeNames.has(s.name))) continue;
    candidates.push(s);
    if (proof) proofs.set(s.id, proof);
  }
  const count = new Map<string, number>();
  for (const c of candidates) if (c.name !== '') count.set(c.name, (count.get(c.name) ?? 0) + 1);
  const duplicateNames = [...count]
    .filter(([, n]) => n > 1)
    .map(([name]) => name)
    .sort();
  const foreignOwned: string[] = [];
  const proven = new Map<string, OwnershipProof>();
  for (const c of candidates) {
    const proof = proofs.get(c.id);
    const owner = c.metadata[OWNER_METADATA_KEY];
    if (owner !== undefined && owner !== id.ownerId) {
      foreignOwned.push(c.id);
      continue;
    }
    // A server in a down cell shows neither name nor state: nothing can be checked against it.
    if (!proof || c.status === 'UNKNOWN' || duplicateNames.includes(c.name)) continue;
    proven.set(c.id, proof);
  }
  return { proven, candidates, duplicateNames, foreignOwned };
}
