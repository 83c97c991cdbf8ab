// A shard's metrics, computed at each scrape from the operator's cache (every shard's clusters):
// how many clusters this shard owns and skips, and which shard it is.
import { Gauge, type Registry } from 'prom-client';
import type { ShardSummary } from './shard.ts';

export function registerShardMetrics(registry: Registry, summary: () => ShardSummary): void {
  const registers = [registry];
  new Gauge({
    name: 'kubeward_operator_shard_clusters',
    help: "ManagedClusters this shard sees, by state: owned (by hash or pinned by the kubeward.io/shard label), skipped (another shard's), refused (a label naming no shard: no shard acts; counted by the shard its hash picks).",
    labelNames: ['shard', 'state'],
    registers,
    collect() {
      const s = summary();
      this.reset();
      this.set({ shard: s.shard, state: 'owned' }, s.owned);
      this.set({ shard: s.shard, state: 'pinned' }, s.pinnedHere);
      this.set({ shard: s.shard, state: 'skipped' }, s.skipped);
      this.set({ shard: s.shard, state: 'refused' }, s.refused.length);
    },
  });
}
