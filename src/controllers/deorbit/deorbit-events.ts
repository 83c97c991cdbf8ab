// Event reasons, named as Kubernikus named them so existing alerts and dashboards keep matching.
import type { DeorbitEvent, DeleteAction, ObjectKind, RefusalReason, StopReason } from './deorbit-types.ts';

export type WaitStep = 'snapshots' | 'volumes' | 'loadbalancers';

const STEP_NOUN: Record<WaitStep, string> = { snapshots: 'Snapshots', volumes: 'PVs', loadbalancers: 'LoadBalancers' };
const OBJECT_NOUN: Record<ObjectKind, string> = {
  VolumeSnapshot: 'Snapshot',
  PersistentVolumeClaim: 'PVC',
  Service: 'Service',
  Pod: 'Pod',
  Deployment: 'Workload',
  StatefulSet: 'Workload',
  DaemonSet: 'Workload',
  ReplicaSet: 'Workload',
  Job: 'Workload',
  CinderVolume: 'Volume',
  LoadBalancer: 'LoadBalancer',
};

/** "Kind namespace/name" in the cluster, "Cinder volume <id>" / "Octavia load balancer <id>" in the cloud. */
export function actionName(a: DeleteAction): string {
  if (a.kind === 'CinderVolume') return `Cinder volume ${a.name}`;
  if (a.kind === 'LoadBalancer') return `Octavia load balancer ${a.name}`;
  return `${a.kind} ${a.namespace}/${a.name}`;
}

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
  return { type: 'Normal', reason: `SuccessfulDeorbit${OBJECT_NOUN[a.kind]}`, message: `deleted ${actionName(a)}` };
}

/** Names the object that failed (Kubernikus named the last one that succeeded). */
export function deleteFailedEvent(a: DeleteAction, error: string): DeorbitEvent {
  return { type: 'Warning', reason: `FailedDeorbit${OBJECT_NOUN[a.kind]}`, message: `could not delete ${actionName(a)}: ${error}` };
}

export const SELF_DESTRUCT_REASON = 'SuccessfulDeorbitSelfDestruct';
export const SELF_DESTRUCT_FAILED_REASON = 'FailedDeorbitSelfDestruct';
export const RETAINED_VOLUMES_REASON = 'RetainedDeorbitVolumes';
/** deorbit refused to act or to judge: the message names why. */
export const DEORBIT_HELD_REASON = 'DeorbitHeld';
export const AMBIGUOUS_LB_REASON = 'AmbiguousDeorbitLoadBalancers';
/** The load-balancer cluster name is the shared default: names prove nothing, only IDs count. */
export const UNPROVEN_LB_NAMES_REASON = 'UnprovenDeorbitLoadBalancerNames';
/** deorbit could read everything but must not act (another cluster, a twin, a re-creator): the message names why. */
export const DEORBIT_REFUSED_REASON = 'DeorbitRefused';
/** Claims that pods still mount, and which pods. */
export const CLAIMS_IN_USE_REASON = 'DeorbitClaimsInUse';
/** A recorded volume or load balancer the cloud kept failing to delete: named by ID. */
export const FAILED_CLOUD_DELETE_REASON = 'FailedDeorbitCloudDelete';
/** The final check: load balancers created in the project since deorbit started. */
export const CREATED_DURING_REASON = 'DeorbitLoadBalancersCreatedMeanwhile';

/** A pass that stops short of deleting: the condition's reason is the StopReason. */
export function refusedEvent(reason: StopReason, detail: string): DeorbitEvent {
  return { type: 'Warning', reason: DEORBIT_REFUSED_REASON, message: `refusing to delete anything (${reason}): ${detail}` };
}

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
