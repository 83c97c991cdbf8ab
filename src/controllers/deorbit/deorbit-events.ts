// Event reasons, named as Kubernikus named them so existing alerts and dashboards keep matching.
import type { DeorbitEvent, DeleteAction, ObjectKind, RefusalReason } from './deorbit-types.ts';

export type WaitStep = 'snapshots' | 'volumes' | 'loadbalancers';

const STEP_NOUN: Record<WaitStep, string> = { snapshots: 'Snapshots', volumes: 'PVs', loadbalancers: 'LoadBalancers' };
const OBJECT_NOUN: Record<ObjectKind, string> = { VolumeSnapshot: 'Snapshot', PersistentVolumeClaim: 'PVC', Service: 'Service' };

export function waitingEvent(step: WaitStep, detail: string): DeorbitEvent {
  return { type: 'Normal', reason: `WaitingForDeorbit${STEP_NOUN[step]}`, message: detail };
}

export function stepDoneEvent(step: WaitStep, detail: string): DeorbitEvent {
  return { type: 'Normal', reason: `SuccessfulDeorbit${STEP_NOUN[step]}`, message: detail };
}

/** An attempt that ran out of time in a wait. Warning (Kubernikus used Normal), so alerts can see it. */
export function stepFailedEvent(step: WaitStep, detail: string): DeorbitEvent {
  return { type: 'Warning', reason: `FailedDeorbit${STEP_NOUN[step]}`, message: detail };
}

export function deletedEvent(a: DeleteAction): DeorbitEvent {
  return { type: 'Normal', reason: `SuccessfulDeorbit${OBJECT_NOUN[a.kind]}`, message: `deleted ${a.kind} ${a.namespace}/${a.name}` };
}

/** Names the object that failed (Kubernikus named the last one that succeeded). */
export function deleteFailedEvent(a: DeleteAction, error: string): DeorbitEvent {
  return { type: 'Warning', reason: `FailedDeorbit${OBJECT_NOUN[a.kind]}`, message: `could not delete ${a.kind} ${a.namespace}/${a.name}: ${error}` };
}

export const SELF_DESTRUCT_REASON = 'SuccessfulDeorbitSelfDestruct';
export const SELF_DESTRUCT_FAILED_REASON = 'FailedDeorbitSelfDestruct';
export const RETAINED_VOLUMES_REASON = 'RetainedDeorbitVolumes';
/** deorbit refused to act or to judge: the message names why. */
export const DEORBIT_HELD_REASON = 'DeorbitHeld';
export const AMBIGUOUS_LB_REASON = 'AmbiguousDeorbitLoadBalancers';
/** The load-balancer cluster name is the shared default: names prove nothing, only IDs count. */
export const UNPROVEN_LB_NAMES_REASON = 'UnprovenDeorbitLoadBalancerNames';
/** The operator's dry run: what a pass would delete and wait for. */
export const DEORBIT_DRY_RUN_REASON = 'DeorbitDryRun';
/** A deleted ManagedCluster whose deletionPolicy is Orphan: its finalizer goes, nothing is cleaned up. */
export const DEORBIT_ORPHANED_REASON = 'DeorbitSkipped';

const REFUSAL_TEXT: Record<RefusalReason, string> = {
  CloudAnswerUnreadable: 'OpenStack answered with something that is not the list asked for (or a paging loop)',
  ClusterAnswerUnreadable: "the cluster's API answered with something that is not the list asked for",
};

/** A pass that holds: nothing is deleted and nothing counts as gone until the answers can be read. */
export function heldEvent(reason: RefusalReason, detail: string): DeorbitEvent {
  return {
    type: 'Warning',
    reason: DEORBIT_HELD_REASON,
    message: `holding (${reason}): ${REFUSAL_TEXT[reason]}; nothing counts as gone until it can be read: ${detail}`,
  };
}

/** "3: a, b, c", shortened past 10 names. */
export function listText(ids: readonly string[]): string {
  if (ids.length === 0) return 'none';
  const shown = ids.slice(0, 10).join(', ');
  return `${ids.length}: ${shown}${ids.length > 10 ? ', …' : ''}`;
}
