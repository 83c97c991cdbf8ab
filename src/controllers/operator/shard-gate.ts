// The operator's ownsCluster predicate for one shard: shard.ts decides, this says so in the log,
// once per cluster and again only when the answer changes (a label added or removed), so a watch
// event or a resync does not repeat it: a skipped cluster at debug level, a cluster that moves to or
// from this shard at info, a label that names no shard at warn (by one shard only, see shardDecision).
import type { Logger } from '../../base/logger.ts';
import { formatShard, memoizedHashShard, shardDecision, type ClusterMeta, type HashShard, type Shard } from './shard.ts';

export interface ShardGate {
  owns(meta: ClusterMeta): boolean;
  /** Forget clusters that are gone (called with every key that is still there). */
  prune(present: ReadonlySet<string>): void;
  /** The gate's memoized hashShard, for the status and metrics that place every cluster again (summarizeShard). */
  readonly hash: HashShard;
}

export function shardGate(shard: Shard, log: Logger): ShardGate {
  /** Last decision per cluster key, to log changes only. */
  const seen = new Map<string, { owned: boolean; reason: string }>();
  const name = formatShard(shard);
  const hash = memoizedHashShard();
  return {
    hash,
    owns(meta) {
      const key = `${meta.namespace ?? ''}/${meta.name}`;
      const d = shardDecision(shard, meta, hash);
      const reason = d.owned ? `owned (${d.by})` : d.reason;
      const before = seen.get(key);
      if (before?.reason === reason) return d.owned;
      seen.set(key, { owned: d.owned, reason });
      if (!d.owned && d.report) log.warn({ cluster: key, shard: name }, `shard: no shard acts on this cluster: ${d.report}`);
      if (before === undefined) {
        if (!d.owned) log.debug({ cluster: key, shard: name, reason }, 'shard: skipped, another shard owns it');
      } else if (before.owned !== d.owned) {
        log.info({ cluster: key, shard: name, reason }, d.owned ? 'shard: cluster moved to this shard' : 'shard: cluster moved away from this shard');
      }
      return d.owned;
    },
    prune(present) {
      for (const key of seen.keys()) if (!present.has(key)) seen.delete(key);
    },
  };
}
