// deorbit's own counters: passes that held (and why), deletions the per-pass budget held back, and
// deleted ManagedClusters left alone by their deletionPolicy. Made once per registry (the mode's).
import { Counter, type Registry } from '../../admin/metrics.ts';
import type { DeorbitMetrics } from './deorbit-types.ts';

export function createDeorbitMetrics(registry: Registry): DeorbitMetrics {
  const registers = [registry];
  const refusals = new Counter({
    name: 'kubeward_deorbit_refusals_total',
    help: 'Passes (or deleted clusters) where deorbit refused to act or to judge, by reason.',
    labelNames: ['reason'],
    registers,
  });
  const held = new Counter({
    name: 'kubeward_deorbit_deletions_held_back_total',
    help: 'Deletions the per-pass budget (maxDeletesPerPass) moved to a later pass.',
    registers,
  });
  return {
    refused: (reason) => refusals.inc({ reason }),
    heldBack: (count) => {
      if (count > 0) held.inc(count);
    },
  };
}
