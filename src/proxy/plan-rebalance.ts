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
  { action: 'close'; from: string; to: string; spread: number } | { action: 'none'; why: 'too-few-upstreams' | 'balanced' | 'slow-start' | 'busy' };

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

/** One settled connection of the upstream giving one up, as the last round and this one saw it. */
export interface MoveCandidate {
  /** The client sent no byte since the previous look (at least one rebalance interval ago). */
  clientQuiet: boolean;
  /** The upstream sent no byte since then either. */
  upstreamQuiet: boolean;
}

/**
 * Rounds in a row that may find no quiet connection before the oldest busy one is closed anyway:
 * an upstream whose every connection carries requests all the time still gets rebalanced, late.
 */
export const MAX_ROUNDS_WITHOUT_QUIET = 30;

/**
 * Which of the candidates (oldest first) to close, or 'wait' for a later round. Closing is abortive
 * and an L4 proxy cannot see requests, so it picks the connection least likely to carry one in
 * flight: the oldest quiet both ways (an idle keep-alive connection, a quiet watch), else the oldest
 * whose client has been quiet (a watch stream: the upstream talks, the client's request is long
 * sent). A connection whose client keeps sending (keep-alive requests in a row) is cut only after
 * MAX_ROUNDS_WITHOUT_QUIET rounds found nothing quieter: closing it would fail the request in
 * flight, which the client sees as a reset.
 */
export function pickConnectionToMove(candidates: readonly MoveCandidate[], roundsWithoutQuiet: number): number | 'wait' {
  const idle = candidates.findIndex((c) => c.clientQuiet && c.upstreamQuiet);
  if (idle >= 0) return idle;
  const stream = candidates.findIndex((c) => c.clientQuiet);
  if (stream >= 0) return stream;
  return candidates.length > 0 && roundsWithoutQuiet >= MAX_ROUNDS_WITHOUT_QUIET ? 0 : 'wait';
}
