// Pure: what the deorbit reconciler does after a pass, in order, as a plan its executor carries out
// step by step (as routegc and flight act on their verdicts). The order matters: a self-destruct's
// events wait until the finalizer is really gone (a failed removal says so instead); a last check
// that holds the cluster (routegc's routes) keeps the condition False with its own reason; status is
// written before the finalizer goes, so the last progress is never lost with the object.
import { SELF_DESTRUCT_FAILED_REASON } from '../deorbit/deorbit-events.ts';
import type { ClusterIdentity, DeorbitDecision, DeorbitEvent } from '../deorbit/deorbit-types.ts';

/** What a last check before the finalizer goes decided: finish now, or wait and say why. */
export type FinishCheck =
  { finish: true; events?: DeorbitEvent[] } | { finish: false; events?: DeorbitEvent[]; requeueAfterMs: number; reason: string; message: string };

export type ReconcileStep =
  | { kind: 'pin-identity'; identity: ClusterIdentity }
  | { kind: 'record'; events: DeorbitEvent[] }
  /** `waiting`: the condition stays False with this reason although the pass itself is done. */
  | { kind: 'write-status'; waiting?: { reason: string; message: string } }
  /** `failureReason`: the event reason recorded (and the error rethrown) when the removal fails. */
  | { kind: 'remove-finalizer'; failureReason?: string }
  | { kind: 'forget' };

export interface ReconcilePlan {
  steps: ReconcileStep[];
  /** Requeue after, nothing more (a finished cluster), or an error for the work queue's backoff. */
  result: { requeueAfterMs?: number } | { error: string };
  /** Finished: the outcome to log. */
  finished?: 'done' | 'self-destruct';
}

export const isFinishing = (d: DeorbitDecision): d is DeorbitDecision & { outcome: 'done' | 'self-destruct' } =>
  d.outcome === 'done' || d.outcome === 'self-destruct';

/** Steps right after the pass, before any last check: the identity to record and the pass's events (a self-destruct's wait). */
export function planAfterPass(d: DeorbitDecision, passEvents: readonly DeorbitEvent[]): ReconcileStep[] {
  const steps: ReconcileStep[] = [];
  if (d.pin) steps.push({ kind: 'pin-identity', identity: d.pin });
  if (d.outcome !== 'self-destruct' && passEvents.length > 0) steps.push({ kind: 'record', events: [...passEvents] });
  return steps;
}

/** Steps once the last check (if any) answered: its events, the status, and for a finished cluster the finalizer. */
export function planFinish(d: DeorbitDecision, passEvents: readonly DeorbitEvent[], check: FinishCheck): ReconcilePlan {
  const steps: ReconcileStep[] = [];
  if (check.events?.length) steps.push({ kind: 'record', events: check.events });
  if (!check.finish) {
    steps.push({ kind: 'write-status', waiting: { reason: check.reason, message: check.message } });
    return { steps, result: { requeueAfterMs: check.requeueAfterMs } };
  }
  steps.push({ kind: 'write-status' });
  if (isFinishing(d)) {
    const selfDestruct = d.outcome === 'self-destruct';
    steps.push({ kind: 'remove-finalizer', failureReason: selfDestruct ? SELF_DESTRUCT_FAILED_REASON : undefined });
    if (selfDestruct && passEvents.length > 0) steps.push({ kind: 'record', events: [...passEvents] });
    steps.push({ kind: 'forget' });
    return { steps, result: {}, finished: d.outcome };
  }
  if (d.outcome === 'waiting') return { steps, result: { requeueAfterMs: d.requeueAfterMs } };
  return { steps, result: { error: d.progress.lastError ?? d.outcome } };
}
