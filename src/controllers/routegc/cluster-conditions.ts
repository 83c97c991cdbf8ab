// The ManagedCluster conditions routegc and flight keep in operator mode (pure): the route-limit
// warning and one summary per controller, merged into the status only when one of them changed.
import { describeError } from '../../base/errors.ts';
import type { Condition } from '../../clients/kube/kube-types.ts';
import type { RouteGcCycleResult } from './routegc-cycle.ts';

export type ConditionWish = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

export const ROUTE_LIMIT_CONDITION = 'RouteLimitApproaching';
export const ROUTEGC_CONDITION = 'RouteGCHealthy';
export const FLIGHT_CONDITION = 'FlightHealthy';

/** What one flight round left behind, as far as the summary needs it. */
export interface FlightRoundSummary {
  done: { kind: string }[];
  failed: { action: { kind: string }; error: string }[];
  findings: { reason: string }[];
  nodeConditions: { type: string; status: string }[];
}

/**
 * The conditions list with the wishes applied, or undefined when nothing would change (so a steady
 * cluster costs no status write). lastTransitionTime moves only when a condition's status flips.
 */
export function mergeConditions(current: readonly Condition[] | undefined, wishes: readonly ConditionWish[], nowMs: number, generation?: number): Condition[] | undefined {
  const out = [...(current ?? [])];
  let changed = false;
  for (const w of wishes) {
    const i = out.findIndex((c) => c.type === w.type);
    const old = i >= 0 ? out[i] : undefined;
    if (old && old.status === w.status && old.reason === w.reason && old.message === w.message && old.observedGeneration === generation) continue;
    const lastTransitionTime = old && old.status === w.status ? old.lastTransitionTime : new Date(nowMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const next: Condition = { ...w, lastTransitionTime, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
    if (i >= 0) out[i] = next;
    else out.push(next);
    changed = true;
  }
  return changed ? out : undefined;
}

/** routegc's two conditions after a cycle, or its summary alone after a failed one. */
export function routeGcConditions(outcome: { result: RouteGcCycleResult } | { error: unknown }, dryRun: boolean): ConditionWish[] {
  if ('error' in outcome) return [{ type: ROUTEGC_CONDITION, status: 'False', reason: 'CycleFailed', message: clip(`the last cycle failed and changed nothing: ${describeError(outcome.error)}`) }];
  const { decision, removed } = outcome.result;
  if (!decision) return [];
  const { count, limit, approaching } = decision.routeLimit;
  const limitWish: ConditionWish = approaching
    ? { type: ROUTE_LIMIT_CONDITION, status: 'True', reason: 'RouteLimitApproaching', message: `the router holds ${count} of at most ${limit} routes (Neutron max_routes); every Node needs one, so the cluster cannot grow much further` }
    : { type: ROUTE_LIMIT_CONDITION, status: 'False', reason: 'WithinRouteLimit', message: `the router holds ${count} of at most ${limit} routes` };
  const routes = (list: { route: { destination: string; nexthop: string } }[]) => list.map((f) => `${f.route.destination} via ${f.route.nexthop}`).join(', ');
  let summary: ConditionWish;
  if (decision.refusal) summary = { type: ROUTEGC_CONDITION, status: 'False', reason: 'Refused', message: `not removing routes: ${decision.refusal}` };
  else if (decision.unresolved.length) summary = { type: ROUTEGC_CONDITION, status: 'False', reason: 'DuplicateUnresolved', message: `duplicate routes no Node owns: ${routes(decision.unresolved)}` };
  else if (dryRun && removed.length) summary = { type: ROUTEGC_CONDITION, status: 'True', reason: 'DryRun', message: `dry run: would remove ${routes(removed)}` };
  else if (decision.pending.length) summary = { type: ROUTEGC_CONDITION, status: 'True', reason: 'RemovalPending', message: `suspect, removed next cycle if still so: ${routes(decision.pending)}` };
  else summary = { type: ROUTEGC_CONDITION, status: 'True', reason: 'RoutesClean', message: `every route of the cluster reaches one of its instances (${decision.counts.orphaned} orphaned, ${decision.counts.duplicate} duplicate left)` };
  return [limitWish, { ...summary, message: clip(summary.message) }];
}

/** flight's summary: False when a repair failed, the round could not run, or it found what it cannot repair. */
export function flightConditions(outcome: { round: FlightRoundSummary } | { error: unknown }): ConditionWish[] {
  if ('error' in outcome) return [{ type: FLIGHT_CONDITION, status: 'False', reason: 'RoundFailed', message: clip(`the instance list could not be read, nothing was repaired: ${describeError(outcome.error)}`) }];
  const r = outcome.round;
  const wish = (status: 'True' | 'False', reason: string, message: string): ConditionWish[] => [{ type: FLIGHT_CONDITION, status, reason, message: clip(message) }];
  if (r.failed.length) return wish('False', 'RepairsFailed', `${r.failed.length} repair(s) failed: ${r.failed.map((f) => `${f.action.kind} (${f.error})`).join('; ')}`);
  const problems = countBy([...r.findings.map((f) => f.reason), ...r.nodeConditions.filter((c) => c.status === 'True').map((c) => c.type.replace(/^kubeward\.io\//, ''))]);
  if (problems.length) return wish('False', 'ProblemsFound', `found and not repaired: ${problems.join(', ')}`);
  if (r.done.length) return wish('True', 'Repaired', `repaired in the last round: ${countBy(r.done.map((a) => a.kind)).join(', ')}`);
  return wish('True', 'NothingToRepair', 'the last round found nothing to repair');
}

function countBy(items: string[]): string[] {
  const n = new Map<string, number>();
  for (const i of items) n.set(i, (n.get(i) ?? 0) + 1);
  return [...n].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => (v > 1 ? `${k} ×${v}` : k));
}

// Condition messages are for kubectl describe, not for full error dumps.
function clip(s: string): string {
  return s.length > 400 ? `${s.slice(0, 397)}...` : s;
}
