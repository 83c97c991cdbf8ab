// Rebalancing decision: long-lived connections (watches) stay where they landed, so after an
// upstream recovers its peers keep the load (kubernetes#76145). This says which upstream should
// give up one connection now, if any. The adapter closes it; the client reconnects through the
// picker and lands on the least loaded upstream. Pure.
import { isSlowStarting } from './slow-start.ts';
import type { Upstream } from './upstream-list.ts';

export interface RebalancePolicy {
  /** The largest difference in settled connections between healthy upstreams that is left alone. */
  thresholdConnections: number;
  now: number;
  slowStartMs: number;
}

export type RebalanceDecision =
  { action: 'close'; from: string; to: string; spread: number } | { action: 'none'; why: 'too-few-upstreams' | 'balanced' | 'slow-start' };

/**
 * Counts only what the picker could move: upstreams that are up, not drained and not backups;
 * when a local upstream is among them only the local ones, as the picker prefers them anyway.
 * `settled(key)` is the number of the upstream's connections old enough to be moved (young ones
 * are requests in flight, not the long-lived load this is about). While any candidate is still
 * in slow start nothing moves: the two would fight, and slow start already steers new connections.
 */
export function planRebalance(upstreams: readonly Upstream[], settled: (key: string) => number, policy: RebalancePolicy): RebalanceDecision {
  let candidates = upstreams.filter((u) => u.state === 'up' && !u.drained && !u.backup);
  if (candidates.some((u) => u.local)) candidates = candidates.filter((u) => u.local);
  if (candidates.length < 2) return { action: 'none', why: 'too-few-upstreams' };
  if (candidates.some((u) => isSlowStarting(u.slowStartFrom, policy.now, policy.slowStartMs))) return { action: 'none', why: 'slow-start' };
  let busiest = candidates[0]!;
  let least = candidates[0]!;
  // Load is what the picker sees (active), the settled count is what can be moved off.
  for (const u of candidates) {
    if (u.active > busiest.active) busiest = u;
    if (u.active < least.active) least = u;
  }
  const spread = busiest.active - least.active;
  if (spread <= policy.thresholdConnections || settled(busiest.key) === 0) return { action: 'none', why: 'balanced' };
  return { action: 'close', from: busiest.key, to: least.key, spread };
}
