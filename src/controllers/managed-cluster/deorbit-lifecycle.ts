// Pure: what the deorbit controller does with a ManagedCluster at its current point of life, and
// how deorbit progress maps to and from the resource's status (conditions included).
import type { Condition } from '../../clients/kube/kube-types.ts';
import { nextCondition, type ConditionWish } from './cluster-conditions.ts';
import { listText } from '../deorbit/deorbit-events.ts';
import { INITIAL_PROGRESS, type DeorbitProgress } from '../deorbit/deorbit-types.ts';
import { DEORBIT_CONDITION, DEORBIT_FINALIZER, type DeorbitStatus, type ManagedCluster } from './managed-cluster.ts';

export type DeorbitLifecycle =
  | 'adopt' // Running (or no phase: a cluster registered by hand), not being deleted, finalizer or identity missing
  | 'orphan' // being deleted, but neither its spec nor its lifecycle asks for a deorbit: let it go, touch nothing
  | 'protected' // being deleted, but termination protection is on: wait, touch nothing
  | 'deorbit' // being deleted, deorbit asked for, our finalizer is there: clean up
  | 'none'; // not Running yet, or our finalizer is gone (deleted before Running, or done)

/** The fields isDeorbitRequested reads, so any controller's view of a ManagedCluster can ask it. */
export interface DeorbitRequestView {
  spec: { deletionPolicy?: string };
  status?: { phase?: string; deorbit?: { attempt?: number } };
}

/**
 * Whether deleting this ManagedCluster may clean up the cluster behind it: its spec says
 * deletionPolicy Delete, its lifecycle says it is being terminated (status.phase Terminating, set
 * before the delete), or a deorbit already started (progress in status). A deleted object alone
 * proves nothing: GitOps prunes, namespace deletes and hand-registered clusters delete it too.
 * Every clean-up on deletion (deorbit's, and routegc's removal of the cluster's routes) should ask it.
 */
export function isDeorbitRequested(mc: DeorbitRequestView): boolean {
  if (mc.spec.deletionPolicy === 'Delete') return true;
  if (mc.status?.phase === 'Terminating') return true;
  const started = mc.status?.deorbit;
  return started !== undefined && (started.attempt ?? 0) > 0;
}

export function decideLifecycle(mc: ManagedCluster): DeorbitLifecycle {
  const hasFinalizer = mc.metadata.finalizers?.includes(DEORBIT_FINALIZER) ?? false;
  if (!mc.metadata.deletionTimestamp) {
    const phase = mc.status?.phase;
    // Finalizers cannot be added once deletion has started, so this is the only moment to do it; the
    // identity the kubeconfig reaches is recorded with it, for deorbit to check before it deletes.
    const adopted = hasFinalizer && mc.status?.clusterIdentity !== undefined;
    return !adopted && (phase === undefined || phase === 'Running') ? 'adopt' : 'none';
  }
  if (!hasFinalizer) return 'none';
  if (!isDeorbitRequested(mc)) return 'orphan';
  return mc.spec.terminationProtection ? 'protected' : 'deorbit';
}

const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());
const ms = (text: string | undefined): number | undefined => (text === undefined ? undefined : Date.parse(text));

export function progressFromStatus(s: DeorbitStatus | undefined): DeorbitProgress {
  if (!s) return structuredClone(INITIAL_PROGRESS);
  return {
    attempt: s.attempt ?? 0,
    attemptStartedMs: ms(s.attemptStartedAt),
    step: (s.step ?? 'deleting') as DeorbitProgress['step'],
    apiFailingSinceMs: ms(s.apiFailingSince),
    lastError: s.lastError,
    remaining: { ...INITIAL_PROGRESS.remaining, ...s.remaining },
    retainedVolumes: s.retainedVolumes ?? [],
    trackedLoadBalancers: s.trackedLoadBalancers ?? [],
    seenServices: s.seenServices ?? [],
    heldReason: s.heldReason as DeorbitProgress['heldReason'],
    leftovers: { ...INITIAL_PROGRESS.leftovers, ...s.leftovers },
    selfDestructReason: s.selfDestructReason as DeorbitProgress['selfDestructReason'],
    finishedMs: ms(s.finishedAt),
    startedMs: ms(s.startedAt),
    trackedVolumes: s.trackedVolumes ?? [],
    cloudRetries: (s.cloudRetries ?? []).map((r) => ({ id: r.id, kind: r.kind, count: r.count, lastMs: Date.parse(r.lastAt) })),
    kept: s.kept ?? [],
    deletedServices: s.deletedServices ?? [],
    claimsInUse: s.claimsInUse ?? [],
    failedDeletes: s.failedDeletes ?? [],
    createdDuring: s.createdDuring ?? [],
  };
}

export function statusFromProgress(p: DeorbitProgress): DeorbitStatus {
  return {
    step: p.step,
    attempt: p.attempt,
    attemptStartedAt: iso(p.attemptStartedMs),
    apiFailingSince: iso(p.apiFailingSinceMs),
    lastError: p.lastError,
    remaining: p.remaining,
    retainedVolumes: p.retainedVolumes,
    trackedLoadBalancers: p.trackedLoadBalancers,
    seenServices: p.seenServices,
    heldReason: p.heldReason,
    leftovers: p.leftovers,
    selfDestructReason: p.selfDestructReason,
    finishedAt: iso(p.finishedMs),
    summary: summarize(p),
    startedAt: iso(p.startedMs),
    trackedVolumes: p.trackedVolumes,
    cloudRetries: p.cloudRetries.map((r) => ({ id: r.id, kind: r.kind, count: r.count, lastAt: new Date(r.lastMs).toISOString() })),
    kept: p.kept,
    deletedServices: p.deletedServices,
    claimsInUse: p.claimsInUse,
    failedDeletes: p.failedDeletes,
    createdDuring: p.createdDuring,
  };
}

/** One line for `kubectl get managedclusters`. */
export function summarize(p: DeorbitProgress): string {
  if (p.step === 'done') return 'clean';
  if (p.step === 'self-destructed') {
    const l = p.leftovers;
    return `gave up (${p.selfDestructReason}): ${l.volumes.length} volumes, ${l.loadBalancers.length} LBs, ${l.floatingIps.length} FIPs left`;
  }
  const r = p.remaining;
  const left = `snapshots ${r.snapshots}, services ${r.services}, volumes ${r.volumes}, LBs ${r.loadBalancers}`;
  return `attempt ${p.attempt}: ${left}${p.lastError ? `; error: ${p.lastError}` : ''}`;
}

const STEP_REASON: Record<DeorbitProgress['step'], string> = {
  deleting: 'Deleting',
  snapshots: 'WaitingForSnapshots',
  volumes: 'WaitingForVolumes',
  loadbalancers: 'WaitingForLoadBalancers',
  done: 'Completed',
  'self-destructed': 'SelfDestructed',
};

/** A dry-run pass: what the real controller would do, for the condition's message. */
export interface DryRunReport {
  dryRun: string;
}

/** What the DeorbitComplete condition should say for progress (or a protected cluster, or a dry run). */
export function deorbitConditionWish(p: DeorbitProgress | 'protected' | DryRunReport): ConditionWish {
  if (p === 'protected') {
    return {
      type: DEORBIT_CONDITION,
      status: 'False',
      reason: 'TerminationProtected',
      message: 'termination protection is on: nothing is cleaned up until spec.terminationProtection is false',
    };
  }
  if ('dryRun' in p) return { type: DEORBIT_CONDITION, status: 'False', reason: 'DryRun', message: `dry run, nothing is deleted: ${p.dryRun}` };
  const status = p.step === 'done' || p.step === 'self-destructed' ? 'True' : 'False';
  // A hold names its reason (CloudAnswerUnreadable...), other failures are retries.
  const reason =
    status === 'False' && p.heldReason
      ? p.heldReason
      : p.lastError && status === 'False'
        ? 'Retrying'
        : status === 'False' && p.claimsInUse.length > 0
          ? 'ClaimsInUse'
          : STEP_REASON[p.step];
  const waitingFor = status === 'False' ? [...p.leftovers.volumes, ...p.leftovers.loadBalancers] : [];
  const inUse = status === 'False' && p.claimsInUse.length > 0 ? `; claims in use: ${p.claimsInUse.join('; ')}` : '';
  const message = (waitingFor.length > 0 ? `${summarize(p)}; waiting for ${listText(waitingFor)}` : summarize(p)) + inUse;
  return { type: DEORBIT_CONDITION, status, reason, message };
}

/** The DeorbitComplete condition, through the one condition rule (cluster-conditions.ts): the time moves when the status flips. */
export function deorbitCondition(p: DeorbitProgress | 'protected' | DryRunReport, nowMs: number, previous?: Condition): Condition {
  // nextCondition is undefined only when `previous` already says exactly this.
  return nextCondition(previous, deorbitConditionWish(p), nowMs) ?? previous!;
}
