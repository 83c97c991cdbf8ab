// Which servers of a project are provably one cluster's (pure). Only a proven server may be rebooted,
// deleted, labelled or opened up; a server that merely carries a Node's name, or a name of the pool
// grammar, is protected (its addresses stay valid next hops, its Node keeps it "registered") but
// never destroyed. A name or prefix proves nothing: anyone can create `kks-k1-small-debug`, and a
// person's suffix (`-debug`, `-test1`) looks like a generated one.
//
// Proofs, each positive and specific to this cluster:
// - a Node of this cluster whose spec.providerID names the server's UUID (the cloud controller wrote it);
// - owner metadata the provisioner wrote when it created the server for this cluster
//   (`provisionerClaims`, see provisioner-claims.ts for the keys of Kubernikus, CAPO and OpenShift);
// - kubeward's own stamp (OWNER_METADATA_KEY = the cluster's owner id), which flight writes only on
//   a server one of the two proofs above already holds for, or that an explicit adoption names.
// A claim keyed by the cluster's *name* (Kubernikus's `kubernikus:kluster`) is no proof while another
// ManagedCluster of the same name exists (`namesakes`): both could claim the server, so neither does.
// Two candidate servers with one name are reported and both left alone: a name cannot tell them apart.
import type { ClusterInstance, ClusterNode } from './cluster-view.ts';

export const OWNER_METADATA_KEY = 'kubeward:owner';
/** "<namespace>/<name>" of the ManagedCluster whose owner id is in OWNER_METADATA_KEY: names a previous owner. */
export const OWNER_REF_METADATA_KEY = 'kubeward:owner-ref';
export const ownerTag = (ownerId: string): string => `kubeward:owner=${ownerId}`;

/** Kubernikus's random suffix is five characters (pkg/util/node.go checks the length). */
const SUFFIX = /^[a-z0-9]{5}$/;
const POOL = /^[a-z0-9]+$/;

export type OwnershipProof = 'provider-id' | 'provisioner-metadata' | 'owner-metadata' | 'adopted';

/** One metadata key and value that the provisioner writes on the servers it creates for this cluster. */
export interface ProvisionerClaim {
  /** Who writes it, for messages ("kubernikus", "openshift", "capo"). */
  provisioner: string;
  /** Every key must hold exactly its value. */
  metadata: Record<string, string>;
  /** The value is the cluster's name, which another ManagedCluster may share. */
  byName: boolean;
}

export interface ClusterIdentity {
  /** Unique per cluster: the ManagedCluster's UID (operator), --cluster-uid or the cluster's kube-system UID (CLI). None: no stamp proves anything. */
  ownerId?: string;
  /** "<namespace>/<name>" of the ManagedCluster, written beside the stamp. */
  ownerRef?: string;
  /** Pool prefixes "kks-<cluster>-<pool>-", each ending in the delimiter: protective only. */
  poolPrefixes: readonly string[];
  /** Owner metadata the provisioner writes for this cluster. */
  provisionerClaims?: readonly ProvisionerClaim[];
  /** Other ManagedClusters ("<namespace>/<name>") of the same name: a name-keyed claim proves nothing. */
  namesakes?: readonly string[];
  /** Earlier owner ids whose stamps are adopted explicitly (annotation or flag). */
  adoptOwners?: readonly string[];
}

export interface Ownership {
  /** Proven instances by ID, with the proof. Only these may be acted upon destructively. */
  proven: Map<string, OwnershipProof>;
  /** Every server that may be the cluster's: proven ones, those a Node names, those of the name grammar (protective uses). */
  candidates: ClusterInstance[];
  /** Names that more than one candidate carries: reported, and those servers are left alone. */
  duplicateNames: string[];
  /** Candidates whose owner metadata names another owner: never proven. */
  foreignOwned: string[];
  /** Stamps of an earlier owner of this very cluster (same ref, or our Node names the server): owner id -> server ids. */
  previousOwners: Map<string, string[]>;
  /** Servers two clusters could claim: a name-keyed claim with namesakes, or our Node naming a server another owner stamped. */
  conflicts: { instanceId: string; instanceName: string; why: string }[];
}

/** Why a pool name cannot be used in the name grammar, or undefined. */
export function poolNameProblem(pool: string): string | undefined {
  return POOL.test(pool)
    ? undefined
    : `pool name "${pool}" must be lower-case letters and digits only: a "-" in it would make kks-<cluster>-<pool>- names of two clusters collide`;
}

export const poolPrefix = (cluster: string, pool: string): string => `kks-${cluster}-${pool}-`;

/**
 * Named like a server of the pool: the prefix (ending in the "-" delimiter) and five lower-case
 * letters or digits, generated (`b2xq9`) or not (`debug`). Such a server is a candidate, whose
 * addresses stay live next hops; protection may be broad because a name never proves anything.
 */
export function matchesPoolPrefix(name: string, prefix: string): boolean {
  return prefix.length > 1 && prefix.endsWith('-') && name.startsWith(prefix) && SUFFIX.test(name.slice(prefix.length));
}

const holdsClaim = (s: ClusterInstance, c: ProvisionerClaim): boolean =>
  Object.keys(c.metadata).length > 0 && Object.entries(c.metadata).every(([k, v]) => s.metadata[k] === v);

export function proveOwnership(servers: readonly ClusterInstance[], nodes: readonly ClusterNode[], id: ClusterIdentity): Ownership {
  const byProvider = new Set(nodes.flatMap((n) => (n.instanceId ? [n.instanceId] : [])));
  const nodeNames = new Set(nodes.map((n) => n.name));
  const namesakes = id.namesakes ?? [];
  const adopt = new Set(id.adoptOwners ?? []);
  const conflicts: Ownership['conflicts'] = [];
  const ownerOf = (s: ClusterInstance) => s.metadata[OWNER_METADATA_KEY];
  const refOf = (s: ClusterInstance) => s.metadata[OWNER_REF_METADATA_KEY];
  // An adoption names the old owner; a stamp that names another cluster's ref is never adopted.
  const adopted = (s: ClusterInstance): boolean => {
    const owner = ownerOf(s);
    const ref = refOf(s);
    return owner !== undefined && adopt.has(owner) && (ref === undefined || id.ownerRef === undefined || ref === id.ownerRef);
  };
  const proofOf = (s: ClusterInstance): OwnershipProof | undefined => {
    if (byProvider.has(s.id)) return 'provider-id';
    const claims = (id.provisionerClaims ?? []).filter((c) => holdsClaim(s, c));
    if (claims.some((c) => !c.byName || namesakes.length === 0)) return 'provisioner-metadata';
    if (claims.length) {
      // Not even an earlier stamp of ours holds then: it may have been written on the name alone.
      conflicts.push({
        instanceId: s.id,
        instanceName: s.name,
        why: `its ${claims[0]!.provisioner} metadata names the cluster only by name, which ManagedCluster(s) ${namesakes.join(', ')} share`,
      });
      return undefined;
    }
    const owner = ownerOf(s);
    if (owner !== undefined && owner === id.ownerId) return 'owner-metadata';
    return adopted(s) ? 'adopted' : undefined;
  };
  const candidates: ClusterInstance[] = [];
  const proofs = new Map<string, OwnershipProof>();
  for (const s of servers) {
    const proof = proofOf(s);
    const named = s.name !== '' && (nodeNames.has(s.name) || id.poolPrefixes.some((p) => matchesPoolPrefix(s.name, p)));
    if (proof === undefined && !named && !conflicts.some((c) => c.instanceId === s.id)) continue;
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
  const previousOwners = new Map<string, string[]>();
  const proven = new Map<string, OwnershipProof>();
  for (const c of candidates) {
    const proof = proofs.get(c.id);
    const owner = ownerOf(c);
    if (owner !== undefined && owner !== id.ownerId && !adopted(c)) {
      foreignOwned.push(c.id);
      const ref = refOf(c);
      // The same ManagedCluster re-created (restore, re-apply): its ref, or, for a stamp without
      // one, our own Node naming the server. Anything else stamped by another owner that we would
      // otherwise prove is a conflict between two clusters.
      if ((ref !== undefined && ref === id.ownerRef) || (ref === undefined && byProvider.has(c.id))) {
        previousOwners.set(owner, [...(previousOwners.get(owner) ?? []), c.id]);
      } else if (proof !== undefined) {
        conflicts.push({ instanceId: c.id, instanceName: c.name, why: `it is proven ours (${proof}) but stamped by owner ${owner}${ref ? ` (${ref})` : ''}` });
      }
      continue;
    }
    // A server in a down cell shows neither name nor state: nothing can be checked against it.
    if (!proof || c.status === 'UNKNOWN' || duplicateNames.includes(c.name)) continue;
    proven.set(c.id, proof);
  }
  return { proven, candidates, duplicateNames, foreignOwned, previousOwners, conflicts };
}
