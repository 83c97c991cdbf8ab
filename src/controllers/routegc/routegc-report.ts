// kubeward routegc's output: the line a --once look prints, and the last cycle as /status shows it.
import type { RouteGcCycleResult } from './routegc-cycle.ts';

/** The last cycle as /status shows it. */
export function statusOf(r: RouteGcCycleResult) {
  return {
    skipped: r.skipped,
    removed: r.removed.map((f) => ({ ...f.route, reason: f.reason })),
    pending: r.decision?.pending.map((f) => ({ ...f.route, reason: f.reason })),
    counts: r.decision?.counts,
    routeLimit: r.decision?.routeLimit,
    conflicts: r.conflicts,
  };
}

/** One look of --once as a line for people. */
export function summary(label: string, r: RouteGcCycleResult, dryRun: boolean): string {
  if (r.skipped) return `${label}: refused (${r.decision?.refusalCode ?? 'error'}): ${r.skipped}`;
  const d = r.decision!;
  const verb = dryRun ? 'would remove' : 'removed';
  const list = (fs: typeof r.removed) => fs.map((f) => `${f.route.destination} via ${f.route.nexthop} (${f.reason})`).join(', ') || 'none';
  return `${label}: ${d.counts.seen} routes, ${d.counts.ours} of the cluster; ${verb}: ${list(r.removed)}; suspect: ${list(d.pending)}; held back by the budget: ${list(d.heldBack)}; route limit ${d.routeLimit.count}/${d.routeLimit.limit}${d.routeLimit.approaching ? ' (approaching)' : ''}`;
}
