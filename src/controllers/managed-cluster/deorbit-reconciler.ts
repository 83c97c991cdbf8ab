// The deorbit controller's reconcile for one ManagedCluster: add the finalizer while Running and
// record the identity of the cluster its kubeconfig reaches (adoption); once deleted, run one
// deorbit pass, then carry out the plan deorbit-plan.ts decides from its outcome: record its events
// and progress (status, conditions), and remove the finalizer when the cluster is clean or deorbit
// gave up (after an optional last check, such as the operator's route clean-up, which may keep it
// waiting). A deleted cluster whose spec and
// lifecycle do not ask for a deorbit (deletionPolicy Orphan) only loses the finalizer. The signal is
// the leader's fence: once it falls, no deletion, status write or finalizer change is sent.
import type { Clock } from '../../base/clock.ts';
import { KubewardError, describeError } from '../../base/errors.ts';
import type { Logger } from '../../base/logger.ts';
import type { EventSink } from '../../clients/kube/event-recorder.ts';
import { KubeApiError, isConflict, isNotFound } from '../../clients/kube/kube-api-error.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import { DEORBIT_DRY_RUN_REASON, DEORBIT_ORPHANED_REASON, listText } from '../deorbit/deorbit-events.ts';
import { runDeorbitPass, type DeorbitPassInput } from '../deorbit/deorbit-pass.ts';
import type { ClusterIdentity, DeorbitProgress, DeorbitSettings, DeorbitTarget } from '../deorbit/deorbit-types.ts';
import type { ReconcileResult } from '../runtime/controller.ts';
import type { ClusterConnector } from './cluster-connector.ts';
import { mergeConditions } from './cluster-conditions.ts';
import { decideLifecycle, deorbitConditionWish, isDeorbitRequested, progressFromStatus, statusFromProgress, type DryRunReport } from './deorbit-lifecycle.ts';
import { DEORBIT_FINALIZER, type ManagedCluster } from './managed-cluster.ts';
import { isFinishing, planAfterPass, planFinish, type FinishCheck, type ReconcileStep } from './deorbit-plan.ts';

export type { FinishCheck } from './deorbit-plan.ts';

export type BeforeFinish = (mc: ManagedCluster, outcome: 'done' | 'self-destruct', signal?: AbortSignal) => Promise<FinishCheck>;

export interface DeorbitReconcilerDeps {
  clusters: ResourceClient<ManagedCluster>;
  connector: ClusterConnector;
  events: EventSink;
  settings: DeorbitSettings;
  clock: Clock;
  log: Logger;
  /** Asked once deorbit is done or gave up, before the finalizer goes; undefined: finish at once. */
  beforeFinish?: BeforeFinish;
}

export function targetOf(mc: ManagedCluster): DeorbitTarget {
  return {
    deletionStartedMs: Date.parse(mc.metadata.deletionTimestamp!),
    version: mc.spec.version,
    loadBalancerClusterName: mc.spec.openstack?.loadBalancerClusterName || 'kubernetes',
    policy: mc.spec.deorbit,
  };
}

const pinnedOf = (mc: ManagedCluster): ClusterIdentity | undefined => {
  const id = mc.status?.clusterIdentity;
  return id ? { kubeSystemUid: id.kubeSystemUid, caFingerprint: id.caFingerprint } : undefined;
};

/** Other ManagedClusters, not being deleted, that record the same cluster identity ("namespace/name"). */
async function twinsOf(deps: DeorbitReconcilerDeps, mc: ManagedCluster, seen: ClusterIdentity, signal?: AbortSignal): Promise<string[]> {
  const all = await deps.clusters.list(undefined, {}, { signal });
  return all.items
    .filter((o) => o.metadata.uid !== mc.metadata.uid && !o.metadata.deletionTimestamp)
    .filter((o) => o.status?.clusterIdentity?.kubeSystemUid === seen.kubeSystemUid)
    .map((o) => `${o.metadata.namespace}/${o.metadata.name}`)
    .sort();
}

/**
 * Adoption: the finalizer goes on and the identity the kubeconfig reaches is recorded, so that a
 * later deletion acts only on this cluster. A cluster that cannot be reached now is recorded on a
 * later reconcile (or on the first deorbit pass).
 */
async function adopt(deps: DeorbitReconcilerDeps, mc: ManagedCluster, signal?: AbortSignal): Promise<ReconcileResult> {
  if (!mc.metadata.finalizers?.includes(DEORBIT_FINALIZER)) {
    signal?.throwIfAborted();
    await patchFinalizers(deps, mc, [...(mc.metadata.finalizers ?? []), DEORBIT_FINALIZER], signal);
  }
  if (mc.status?.clusterIdentity) return {};
  let identity: ClusterIdentity | undefined;
  try {
    const ports = await deps.connector.connect(mc);
    identity = await ports.satellite.identity?.();
  } catch (err) {
    deps.log.debug({ cluster: mc.metadata.name, err: describeError(err) }, 'cluster identity not recorded yet');
    return { requeueAfterMs: deps.settings.pollIntervalMs };
  }
  if (!identity) return {};
  signal?.throwIfAborted();
  await recordIdentity(deps, await deps.clusters.get(mc.metadata.namespace, mc.metadata.name), identity, signal);
  return {};
}

async function recordIdentity(deps: DeorbitReconcilerDeps, mc: ManagedCluster, identity: ClusterIdentity, signal?: AbortSignal): Promise<ManagedCluster> {
  const status = { ...mc.status, clusterIdentity: { ...identity, recordedAt: new Date(deps.clock.now()).toISOString() } };
  return deps.clusters.replaceStatus({ ...mc, status }, { signal });
}

export function deorbitReconciler(deps: DeorbitReconcilerDeps): (key: string, signal?: AbortSignal) => Promise<ReconcileResult> {
  return async (key, signal) => {
    const [namespace, name] = key.split('/') as [string, string];
    let mc: ManagedCluster;
    try {
      mc = await deps.clusters.get(namespace, name);
    } catch (err) {
      if (isNotFound(err)) return {};
      throw err;
    }
    // A dry run adds no finalizer, so a deleted cluster may lack it: report what a deorbit would do anyway.
    if (deps.settings.dryRun && mc.metadata.deletionTimestamp && isDeorbitRequested(mc) && !mc.spec.terminationProtection) return dryRun(deps, mc, signal);
    switch (decideLifecycle(mc)) {
      case 'none':
        return {};
      case 'adopt':
        if (deps.settings.dryRun) return {}; // a finalizer holds deletion: not in a dry run
        return adopt(deps, mc, signal);
      case 'orphan':
        if (deps.settings.dryRun) {
          await deps.events.record(
            mc,
            'Normal',
            DEORBIT_ORPHANED_REASON,
            `dry run: deletionPolicy is ${mc.spec.deletionPolicy ?? 'Orphan (default)'}; would remove the finalizer and touch nothing`,
          );
          return {};
        }
        return orphan(deps, mc, signal);
      case 'protected':
        await writeStatus(deps, mc, 'protected', undefined, signal);
        return {};
      case 'deorbit':
        return deps.settings.dryRun ? dryRun(deps, mc, signal) : deorbit(deps, mc, signal);
    }
  };
}

async function portsFor(deps: DeorbitReconcilerDeps, mc: ManagedCluster): Promise<DeorbitPassInput['ports']> {
  try {
    return await deps.connector.connect(mc);
  } catch (err) {
    // Our own API failing is not the cluster's problem: retry without counting it against the cluster.
    if (err instanceof KubeApiError) throw err;
    return { failure: { ok: false, source: 'credentials', kind: 'other', message: describeError(err) } };
  }
}

/** One pass of the real decision, reported (event and condition) and not acted on; looks again every poll. */
async function dryRun(deps: DeorbitReconcilerDeps, mc: ManagedCluster, signal?: AbortSignal): Promise<ReconcileResult> {
  const ports = await portsFor(deps, mc);
  const progress = progressFromStatus(mc.status?.deorbit);
  const { decision, wouldDelete } = await runDeorbitPass({
    nowMs: deps.clock.now(),
    settings: deps.settings,
    target: targetOf(mc),
    progress,
    ports,
    pinned: pinnedOf(mc),
    twins: (seen) => twinsOf(deps, mc, seen, signal),
    dryRun: true,
    signal,
  });
  const p = decision.progress;
  const name = (a: { kind: string; namespace: string; name: string }) => `${a.kind} ${a.namespace}/${a.name}`;
  const report =
    decision.outcome === 'failed'
      ? `would hold: ${p.heldReason ? `${p.heldReason}: ` : ''}${p.lastError ?? 'the cluster or the cloud could not be read'}`
      : `would delete now ${listText(wouldDelete.map(name))}; later (budget) ${listText(decision.deferred.map(name))}; ` +
        `would wait for volumes ${listText(p.leftovers.volumes)}, load balancers ${listText(p.leftovers.loadBalancers)}` +
        (decision.outcome === 'done' ? '; would then remove the finalizer' : '');
  signal?.throwIfAborted();
  await deps.events.record(mc, 'Normal', DEORBIT_DRY_RUN_REASON, report);
  await writeStatus(deps, mc, { dryRun: report }, undefined, signal);
  return { requeueAfterMs: deps.settings.pollIntervalMs };
}

async function deorbit(deps: DeorbitReconcilerDeps, mc: ManagedCluster, signal?: AbortSignal): Promise<ReconcileResult> {
  const progress = progressFromStatus(mc.status?.deorbit);
  const ports = await portsFor(deps, mc);
  const { decision, events } = await runDeorbitPass({
    nowMs: deps.clock.now(),
    settings: deps.settings,
    target: targetOf(mc),
    progress,
    ports,
    signal,
    pinned: pinnedOf(mc),
    twins: (seen) => twinsOf(deps, mc, seen, signal),
    // The cloud IDs to wait for are in status before the first deletion: a restart keeps them.
    recordFirst: async (first) => {
      mc = await writeStatus(deps, mc, first, undefined, signal);
    },
  });
  signal?.throwIfAborted();
  // What follows is decided by deorbit-plan.ts; this only carries the steps out, in order.
  mc = await runSteps(deps, mc, decision.progress, planAfterPass(decision, events), signal);
  const check: FinishCheck = isFinishing(decision) && deps.beforeFinish ? await deps.beforeFinish(mc, decision.outcome, signal) : { finish: true };
  const plan = planFinish(decision, events, check);
  await runSteps(deps, mc, decision.progress, plan.steps, signal);
  if (plan.finished) deps.log.info({ cluster: mc.metadata.name, outcome: plan.finished, reason: decision.progress.selfDestructReason }, 'deorbit finished');
  if ('error' in plan.result) throw new KubewardError('E_STATE', `deorbit of ${mc.metadata.namespace}/${mc.metadata.name}: ${plan.result.error}`);
  return plan.result;
}

/** Carries out a plan's steps in order; the fence is checked before every write. Returns the cluster as last written. */
async function runSteps(
  deps: DeorbitReconcilerDeps,
  mc: ManagedCluster,
  p: DeorbitProgress,
  steps: readonly ReconcileStep[],
  signal?: AbortSignal,
): Promise<ManagedCluster> {
  for (const step of steps) {
    signal?.throwIfAborted();
    switch (step.kind) {
      case 'pin-identity':
        mc = await recordIdentity(deps, mc, step.identity, signal);
        break;
      case 'record':
        for (const ev of step.events) await deps.events.record(mc, ev.type, ev.reason, ev.message);
        break;
      case 'write-status':
        mc = await writeStatus(deps, mc, p, step.waiting, signal);
        break;
      case 'remove-finalizer':
        try {
          await patchFinalizers(
            deps,
            mc,
            (mc.metadata.finalizers ?? []).filter((f) => f !== DEORBIT_FINALIZER),
            signal,
          );
        } catch (err) {
          if (step.failureReason) await deps.events.record(mc, 'Warning', step.failureReason, `could not remove the finalizer: ${describeError(err)}`);
          throw err;
        }
        break;
      case 'forget':
        deps.connector.forget(mc.metadata.uid ?? '');
        break;
    }
  }
  return mc;
}

/**
 * Deleted without a deorbit asked for (deletionPolicy Orphan, not Terminating): say so, count it, and
 * let the object go. Nothing in the cluster or the cloud is touched.
 */
async function orphan(deps: DeorbitReconcilerDeps, mc: ManagedCluster, signal?: AbortSignal): Promise<ReconcileResult> {
  const policy = mc.spec.deletionPolicy ?? 'Orphan (default)';
  await deps.events.record(
    mc,
    'Normal',
    DEORBIT_ORPHANED_REASON,
    `deletionPolicy is ${policy} and the cluster is not Terminating: its load balancers, volumes and snapshots are left as they are; set spec.deletionPolicy: Delete before deleting to clean them up`,
  );
  deps.settings.metrics?.refused('DeletionPolicyOrphan');
  signal?.throwIfAborted();
  await patchFinalizers(
    deps,
    mc,
    (mc.metadata.finalizers ?? []).filter((f) => f !== DEORBIT_FINALIZER),
    signal,
  );
  deps.connector.forget(mc.metadata.uid ?? '');
  deps.log.info({ cluster: mc.metadata.name, policy }, 'deleted without deorbit (deletionPolicy Orphan)');
  return {};
}

/**
 * Writes phase, deorbit progress and the condition; retries once on a stale resourceVersion.
 * `waiting`: the condition stays False with this reason although the pass itself is done.
 */
async function writeStatus(
  deps: DeorbitReconcilerDeps,
  mc: ManagedCluster,
  p: DeorbitProgress | 'protected' | DryRunReport,
  waiting?: { reason: string; message: string },
  signal?: AbortSignal,
): Promise<ManagedCluster> {
  const progress = p !== 'protected' && !('dryRun' in p) ? p : undefined;
  for (let attempt = 0; ; attempt++) {
    const wish = { ...deorbitConditionWish(p), ...(waiting ? { status: 'False' as const, ...waiting } : {}) };
    // Only a running deorbit marks the cluster Terminating and keeps progress (a dry run or a
    // protected cluster writes its condition alone).
    const status = {
      ...mc.status,
      ...(progress ? { phase: 'Terminating' as const, deorbit: statusFromProgress(progress) } : {}),
      conditions: mergeConditions(mc.status?.conditions, [wish], deps.clock.now()) ?? mc.status?.conditions,
    };
    if (JSON.stringify(status) === JSON.stringify(mc.status)) return mc;
    try {
      signal?.throwIfAborted();
      return await deps.clusters.replaceStatus({ ...mc, status }, { signal });
    } catch (err) {
      if (!isConflict(err) || attempt > 0) throw err;
      mc = await deps.clusters.get(mc.metadata.namespace, mc.metadata.name);
    }
  }
}

/** JSON patch guarded by a test of the current list, so a concurrent change to finalizers is never lost. */
async function patchFinalizers(deps: DeorbitReconcilerDeps, mc: ManagedCluster, finalizers: string[], signal?: AbortSignal): Promise<void> {
  const patch = [
    { op: 'test', path: '/metadata/resourceVersion', value: mc.metadata.resourceVersion },
    { op: mc.metadata.finalizers ? 'replace' : 'add', path: '/metadata/finalizers', value: finalizers },
  ];
  try {
    signal?.throwIfAborted();
    await deps.clusters.patch(mc.metadata.namespace, mc.metadata.name, patch, 'json', undefined, { signal });
  } catch (err) {
    // 422 from the failed test, or 409: someone wrote first; the next reconcile sees the new state.
    if (err instanceof KubeApiError && (err.status === 422 || err.status === 409))
      throw new KubewardError('E_CONFLICT', `${mc.metadata.name} changed meanwhile; retrying`, { cause: err });
    throw err;
  }
}
