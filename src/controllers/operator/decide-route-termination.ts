// Pure: whether deorbit may remove its finalizer once the cluster's routes are concerned. With
// routegc in the operator, termination removes every route in the cluster CIDR after deorbit's
// own clean-up (the cluster's controllers still need the pod network while they delete LBs and
// volumes) and deorbit's completion waits until the router shows none, up to the hang timeout.
import type { ManagedClusterEvent } from '../managed-cluster/cluster-events.ts';

export interface RouteTerminationInput {
  outcome: 'done' | 'self-destruct';
  /** routegc's dry run removes nothing, so nothing is waited for. */
  dryRun: boolean;
  routerId: string;
  /** Routes of the cluster CIDR still on the router after this pass's removal ("dest via hop"); undefined: not readable. */
  left: string[] | undefined;
  /** Why the router could not be read or written, when it could not. */
  error?: string;
  /** The DeorbitComplete condition already says WaitingForRoutes (the waiting event was recorded). */
  alreadyWaiting: boolean;
  nowMs: number;
  deletionStartedMs: number;
  hangTimeoutMs: number;
  pollMs: number;
}

export interface RouteTerminationEvent extends ManagedClusterEvent {
  reason: 'SuccessfulDeorbitRoutes' | 'FailedDeorbitRoutes' | 'WaitingForDeorbitRoutes';
}

export type RouteTerminationDecision =
  | { finish: true; events: RouteTerminationEvent[] }
  | { finish: false; events: RouteTerminationEvent[]; requeueAfterMs: number; reason: 'WaitingForRoutes'; message: string };

export const WAITING_FOR_ROUTES = 'WaitingForRoutes';

export function decideRouteTermination(i: RouteTerminationInput): RouteTerminationDecision {
  if (i.dryRun) return { finish: true, events: [] };
  const what =
    i.left === undefined ? `router ${i.routerId} could not be read: ${i.error ?? 'unknown error'}` : `${listText(i.left)} left on router ${i.routerId}`;
  if (i.left?.length === 0) {
    return {
      finish: true,
      events: [{ type: 'Normal', reason: 'SuccessfulDeorbitRoutes', message: `no route of the cluster CIDR is left on router ${i.routerId}` }],
    };
  }
  if (i.outcome === 'self-destruct') {
    return { finish: true, events: [{ type: 'Warning', reason: 'FailedDeorbitRoutes', message: `deorbit gave up; routes of the cluster CIDR: ${what}` }] };
  }
  if (i.nowMs - i.deletionStartedMs >= i.hangTimeoutMs) {
    const hours = Math.round((i.hangTimeoutMs / 3_600_000) * 10) / 10;
    return {
      finish: true,
      events: [
        {
          type: 'Warning',
          reason: 'FailedDeorbitRoutes',
          message: `gave up waiting for the routes ${hours} h after deletion; routes of the cluster CIDR: ${what}`,
        },
      ],
    };
  }
  const message = `volumes and load balancers are gone; waiting for the cluster's routes: ${what}`;
  const events: RouteTerminationEvent[] = i.alreadyWaiting ? [] : [{ type: 'Normal', reason: 'WaitingForDeorbitRoutes', message }];
  return { finish: false, events, requeueAfterMs: i.pollMs, reason: WAITING_FOR_ROUTES, message };
}

function listText(items: readonly string[]): string {
  const shown = items.slice(0, 10).join(', ');
  return `${items.length}${items.length ? ` (${shown}${items.length > 10 ? ', …' : ''})` : ''}`;
}
