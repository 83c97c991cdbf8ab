// routegc's ManagedCluster conditions in operator mode (pure): the route-limit warning and the
// cycle's summary, built on the shared condition helper.
import { describeError } from '../../base/errors.ts';
import { clipMessage, type ConditionWish } from '../managed-cluster/cluster-conditions.ts';
import type { RouteGcCycleResult } from './routegc-cycle.ts';

export const ROUTE_LIMIT_CONDITION = 'RouteLimitApproaching';
export const ROUTEGC_CONDITION = 'RouteGCHealthy';

/** routegc's two conditions after a cycle, or its summary alone after a failed one. */
export function routeGcConditions(outcome: { result: RouteGcCycleResult } | { error: unknown }, dryRun: boolean): ConditionWish[] {
  if ('error' in outcome)
    return [
      {
        type: ROUTEGC_CONDITION,
        status: 'False',
        reason: 'CycleFailed',
        message: clipMessage(`the last cycle failed and changed nothing: ${describeError(outcome.error)}`),
      },
    ];
  const { decision, removed } = outcome.result;
  if (!decision) return [];
  const { count, limit, approaching } = decision.routeLimit;
  const limitWish: ConditionWish = approaching
    ? {
        type: ROUTE_LIMIT_CONDITION,
        status: 'True',
        reason: 'RouteLimitApproaching',
        message: `the router holds ${count} of at most ${limit} routes (Neutron max_routes); every Node needs one, so the cluster cannot grow much further`,
      }
    : { type: ROUTE_LIMIT_CONDITION, status: 'False', reason: 'WithinRouteLimit', message: `the router holds ${count} of at most ${limit} routes` };
  const routes = (list: { route: { destination: string; nexthop: string } }[]) => list.map((f) => `${f.route.destination} via ${f.route.nexthop}`).join(', ');
  let summary: ConditionWish;
  if (decision.refusal)
    summary = {
      type: ROUTEGC_CONDITION,
      status: 'False',
      reason: 'Refused',
      message: `not removing routes (${decision.refusalCode ?? 'Refused'}): ${decision.refusal}`,
    };
  else if (decision.unresolved.length)
    summary = {
      type: ROUTEGC_CONDITION,
      status: 'False',
      reason: 'DuplicateUnresolved',
      message: `duplicate routes no Node owns: ${routes(decision.unresolved)}`,
    };
  else if (dryRun && removed.length)
    summary = { type: ROUTEGC_CONDITION, status: 'True', reason: 'DryRun', message: `dry run: would remove ${routes(removed)}` };
  else if (decision.pending.length)
    summary = {
      type: ROUTEGC_CONDITION,
      status: 'True',
      reason: 'RemovalPending',
      message: `suspect, removed next cycle if still so: ${routes(decision.pending)}`,
    };
  else
    summary = {
      type: ROUTEGC_CONDITION,
      status: 'True',
      reason: 'RoutesClean',
      message: `every route of the cluster reaches one of its instances (${decision.counts.orphaned} orphaned, ${decision.counts.duplicate} duplicate left)`,
    };
  return [limitWish, { ...summary, message: clipMessage(summary.message) }];
}
