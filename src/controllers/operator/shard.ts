// Sharding the operator across Deployments: `kubeward operator --shard i/N` acts only for the
// ManagedClusters of shard i, each shard elects its own leader on its own Lease, and nothing else
// is coordinated: which shard owns a cluster is a pure function of the cluster's namespace/name
// (and an optional pinning label), so every replica of every shard computes the same answer from
// what the API already holds. docs/operator-sharding.md has the procedure for changing N.
//
// Why namespace/name and not the uid: the name survives a backup and restore (Velero re-creates
// the object with a new uid), and a cluster deleted and re-created under the same name, whose cloud
// resources are the same ones, stays with the same shard. The key is also known without the object
// (a work-queue key), which the reconcile-time check needs after the object is gone.
//
// Why rendezvous (highest random weight) hashing and not hash mod N: when N grows to N+1 only the
// clusters the new shard wins move (about 1/(N+1) of them), and when the last shard goes only its
// own clusters move; with mod N almost every cluster would change its shard on every resize.
import { createHash } from 'node:crypto';
import { Refused, quote } from '../../config/fields.ts';

/** Pins a ManagedCluster to one shard (its index, a decimal number), overriding the hash. */
export const SHARD_LABEL = 'kubeward.io/shard';
/** More shards than this is a sign of a mistake: each shard is a Deployment with its own Lease. */
export const MAX_SHARDS = 64;

export interface Shard {
  /** 0 … count-1 */
  index: number;
  count: number;
}

export interface ClusterMeta {
  namespace?: string;
  name: string;
  labels?: Record<string, string>;
}

/** How a cluster's shard was decided: by the hash, by its label, or by nobody (a label that names no shard). */
export type Placement = { owner: number; by: 'hash' | 'label' } | { owner: undefined; by: 'bad-label'; problem: string };

/** "1/3" → { index: 1, count: 3 }; the problem in words otherwise (the caller names the flag). */
export function parseShard(text: string): Shard | Refused {
  const m = /^(\d{1,4})\/(\d{1,4})$/.exec(text.trim());
  if (!m) return new Refused(`${quote(text)} is not a shard; write it as <index>/<count>, e.g. 0/2 for the first of two shards`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_SHARDS) return new Refused(`${quote(text)} has ${count} shards; give between 1 and ${MAX_SHARDS}`);
  if (index >= count)
    return new Refused(
      `${quote(text)}: the index counts from 0, so it must be below ${count} (0 to ${count - 1}); e.g. ${count - 1}/${count} for the last shard`,
    );
  return { index, count };
}

export function formatShard(s: Shard): string {
  return `${s.index}/${s.count}`;
}

/** Each shard's own Lease: "kubeward-operator" → "kubeward-operator-shard-1-of-3". */
export function shardLeaseName(base: string, s: Shard): string {
  return `${base}-shard-${s.index}-of-${s.count}`;
}

/** The shard of a namespace/name among count shards by rendezvous hashing (no label looked at). */
export function hashShard(namespace: string | undefined, name: string, count: number): number {
  const key = `${namespace ?? ''}/${name}`;
  let best = 0;
  let bestScore = -1;
  for (let i = 0; i < count; i++) {
    // 48 bits of SHA-256 are an exact integer in a double; a tie is left to the lower index.
    const score = createHash('sha256').update(`${i}\n${key}`).digest().readUIntBE(0, 6);
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  }
  return best;
}

export type HashShard = typeof hashShard;

const MEMO_MAX = 100_000;

/**
 * hashShard with its answers kept, one per shard gate (shard-gate.ts): each status request and
 * metrics scrape places every cluster again, and 64 shards × 1,000 clusters took 130 ms of SHA-256
 * on this machine, on the event loop. About 100 bytes per cluster; cleared past MEMO_MAX entries.
 */
export function memoizedHashShard(): HashShard {
  const memo = new Map<string, number>();
  return (namespace, name, count) => {
    const memoKey = `${count}\n${namespace ?? ''}/${name}`;
    const known = memo.get(memoKey);
    if (known !== undefined) return known;
    const best = hashShard(namespace, name, count);
    if (memo.size >= MEMO_MAX) memo.clear();
    memo.set(memoKey, best);
    return best;
  };
}

/** The shard a cluster belongs to among count shards: its label when it has one, else the hash. */
export function placeCluster(meta: ClusterMeta, count: number, hash: HashShard = hashShard): Placement {
  const label = meta.labels?.[SHARD_LABEL];
  if (label === undefined) return { owner: hash(meta.namespace, meta.name, count), by: 'hash' };
  if (!/^(0|[1-9]\d{0,3})$/.test(label)) {
    return {
      owner: undefined,
      by: 'bad-label',
      problem: `label ${SHARD_LABEL}=${quote(label)} is not a shard index; set it to a number from 0 to ${count - 1} or remove it`,
    };
  }
  const index = Number(label);
  if (index >= count) {
    return {
      owner: undefined,
      by: 'bad-label',
      problem: `label ${SHARD_LABEL}=${label} names no shard (there are ${count}: 0 to ${count - 1}); change it or remove it`,
    };
  }
  return { owner: index, by: 'label' };
}

/**
 * What shard `s` does with a cluster, and why. A label that names no shard is refused on doubt by
 * every shard (nobody acts on the cluster); the shard the hash would pick says so (reason bad-label)
 * so the problem is reported once, not by every shard.
 */
export function shardDecision(
  s: Shard,
  meta: ClusterMeta,
  hash: HashShard = hashShard,
): { owned: true; by: 'hash' | 'label' } | { owned: false; reason: string; report?: string } {
  const p = placeCluster(meta, s.count, hash);
  if (p.owner === s.index) return { owned: true, by: p.by };
  if (p.owner !== undefined)
    return { owned: false, reason: p.by === 'label' ? `pinned to shard ${p.owner} by its ${SHARD_LABEL} label` : `hashes to shard ${p.owner}` };
  const reportHere = hash(meta.namespace, meta.name, s.count) === s.index;
  return { owned: false, reason: p.problem, ...(reportHere ? { report: p.problem } : {}) };
}

export interface ShardSummary {
  shard: string;
  owned: number;
  /** The owned clusters' namespace/name, sorted (which shard acts for a cluster, at a glance). */
  ownedClusters: string[];
  /** Owned because a label pins them here. */
  pinnedHere: number;
  skipped: number;
  /** Clusters whose label names no shard (nobody acts on them), when this shard is the one to report them. */
  refused: string[];
}

/** What a shard owns among the clusters it sees (status and metrics). */
export function summarizeShard(s: Shard, clusters: readonly ClusterMeta[], hash: HashShard = hashShard): ShardSummary {
  const out: ShardSummary = { shard: formatShard(s), owned: 0, ownedClusters: [], pinnedHere: 0, skipped: 0, refused: [] };
  for (const c of clusters) {
    const d = shardDecision(s, c, hash);
    if (d.owned) {
      out.owned++;
      out.ownedClusters.push(`${c.namespace ?? ''}/${c.name}`);
      if (d.by === 'label') out.pinnedHere++;
    } else {
      out.skipped++;
      if (d.report) out.refused.push(`${c.namespace ?? ''}/${c.name}`);
    }
  }
  out.refused.sort();
  out.ownedClusters.sort();
  return out;
}
