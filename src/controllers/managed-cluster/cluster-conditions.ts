// The one condition rule every controller of a ManagedCluster follows (pure): a condition is written
// only when its status, reason or message changed, and lastTransitionTime moves only when its status
// flips. Used for the ManagedCluster's conditions (cluster-status.ts) and for Node conditions
// (cluster-adapters.ts), so a steady cluster costs no write.
import type { Condition } from '../../clients/kube/kube-types.ts';

export type ConditionWish = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

/** RFC 3339 without fractions, as the apiserver writes metav1.Time. */
export const conditionTime = (nowMs: number): string => new Date(nowMs).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * The condition to write for `wish` given the one in place, or undefined when nothing would change.
 * `generation` is recorded as observedGeneration when given.
 */
export function nextCondition(old: Condition | undefined, wish: ConditionWish, nowMs: number, generation?: number): Condition | undefined {
  if (old && old.status === wish.status && old.reason === wish.reason && old.message === wish.message && old.observedGeneration === generation)
    return undefined;
  const lastTransitionTime = old && old.status === wish.status ? old.lastTransitionTime : conditionTime(nowMs);
  return { ...wish, lastTransitionTime, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
}

/** The conditions list with the wishes applied, or undefined when nothing would change. */
export function mergeConditions(
  current: readonly Condition[] | undefined,
  wishes: readonly ConditionWish[],
  nowMs: number,
  generation?: number,
): Condition[] | undefined {
  const out = [...(current ?? [])];
  let changed = false;
  for (const w of wishes) {
    const i = out.findIndex((c) => c.type === w.type);
    const next = nextCondition(i >= 0 ? out[i] : undefined, w, nowMs, generation);
    if (!next) continue;
    if (i >= 0) out[i] = next;
    else out.push(next);
    changed = true;
  }
  return changed ? out : undefined;
}

/** Condition messages are for kubectl describe, not for full error dumps. */
export function clipMessage(s: string): string {
  return s.length > 400 ? `${s.slice(0, 397)}...` : s;
}
