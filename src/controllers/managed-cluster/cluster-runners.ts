// The one way a controller of `kubeward operator` gets from a queue key to a runner for that
// ManagedCluster: read the object (forgetting runners of deleted clusters), gate it, derive its scope
// (identity, validated CIDR, pools), connect its clients, and keep one runner per cluster until its
// scope changes. Conditions are written through the one condition helper after every run. The
// reconcile's signal is the leader's fence: runs pass it into every destructive call, and no
// condition is written once it has fallen.
import type { Clock } from '../../base/clock.ts';
import type { Logger } from '../../base/logger.ts';
import { EventRecorder, type EventSink } from '../../clients/kube/event-recorder.ts';
import type { KubeObject } from '../../clients/kube/kube-types.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import type { ReconcileResult, Reconciler } from '../runtime/controller.ts';
import { kubeClusterNodes, type ClusterNodes } from './cluster-adapters.ts';
import type { ClusterClients, ClusterClientSource } from './cluster-clients.ts';
import type { ConditionWish } from './cluster-conditions.ts';
import { eventEmitter, type EmitEvent } from './cluster-events.ts';
import { cachedOrForget, getClusterOrForget, jitteredRequeue } from './cluster-lookup.ts';
import { scopeFingerprint, scopeOf, type ClusterScope } from './cluster-scope.ts';
import { clusterConditionWriter, type ClusterConditionWriter } from './cluster-status.ts';
import { deadline } from '../runtime/deadline.ts';
import type { ManagedCluster } from './managed-cluster.ts';

/** Everything a runner is built from. */
export interface ClusterContext {
  mc: ManagedCluster;
  scope: ClusterScope;
  clients: ClusterClients;
  nodes: ClusterNodes;
  /** Events on the ManagedCluster (management cluster) and on the Node concerned (the cluster's own API). */
  emit: EmitEvent;
}

export interface ClusterRunnerOptions {
  clusters: ResourceClient<ManagedCluster>;
  clients: ClusterClientSource;
  events: EventSink;
  clock: Clock;
  log: Logger;
  /** The component name on events ("kubeward-routegc"). */
  component: string;
}

/** Builds a ClusterContext for one cluster (used alone by one-off passes such as termination). */
export async function clusterContext(mc: ManagedCluster, o: Omit<ClusterRunnerOptions, 'clusters'>, signal?: AbortSignal): Promise<ClusterContext> {
  return contextWith(mc, await o.clients(mc, signal), o);
}

function contextWith(mc: ManagedCluster, clients: ClusterClients, o: Omit<ClusterRunnerOptions, 'clusters'>): ClusterContext {
  const scope = scopeOf(mc);
  const nodeEvents = new EventRecorder({ events: clients.kube.events, component: o.component, clock: o.clock, log: o.log });
  // The event's reference to the ManagedCluster, not the object: the runner lives for many cycles,
  // and the whole object it was built from (spec, status) stayed alive next to the informer's newer copy.
  const object: KubeObject = {
    apiVersion: mc.apiVersion,
    kind: mc.kind,
    metadata: { name: mc.metadata.name, namespace: mc.metadata.namespace, uid: mc.metadata.uid, resourceVersion: mc.metadata.resourceVersion },
  };
  const emit = eventEmitter(o.log.child({ cluster: scope.key }), { cluster: { sink: o.events, object }, nodes: nodeEvents });
  return { mc, scope, clients, nodes: kubeClusterNodes(clients.kube), emit };
}

export interface ManagedClusterReconcilerOptions<R> extends ClusterRunnerOptions {
  intervalMs: number;
  random?: () => number;
  /** Keep the controller's conditions in the ManagedCluster's status (default true). */
  conditions?: boolean;
  /**
   * The informer's copy of a ManagedCluster by key (operator): read instead of the API; a key it does
   * not hold is a deleted cluster. Default: read from the API every run.
   */
  cached?: (key: string) => ManagedCluster | undefined;
  /** The process's one status writer, shared by every controller (default: one of this reconciler's own). */
  conditionWriter?: ClusterConditionWriter;
  /** A reason to leave this cluster alone now, or undefined to go ahead. */
  skip(mc: ManagedCluster, scope: ClusterScope): string | undefined;
  /** Told of each skip, for the skips worth an event or a metric (default: the debug log only). */
  skipped?(mc: ManagedCluster, reason: string): Promise<void>;
  /**
   * A runner for the cluster. `previous` is the runner of the same scope whose clients were replaced
   * (a rotated Secret): its memory may be carried over, since the view it formed is still the cluster's.
   */
  build(ctx: ClusterContext, previous?: R): R;
  /** One run: the conditions to hold afterwards and, optionally, when to come back (default: the interval). */
  run(runner: R, ctx: { mc: ManagedCluster; scope: ClusterScope }, signal: AbortSignal): Promise<{ wishes: ConditionWish[]; requeueAfterMs?: number }>;
  /** The conditions after a run that threw (the error is rethrown for the queue's backoff). */
  failed(err: unknown): ConditionWish[];
  /**
   * Every call of one run (client set-up included) is aborted after this long (default: none), so a
   * hung cloud or API ends the run well before the next one is due; the condition still says why.
   */
  deadlineMs?: number;
}

/** Runs apart by more than this many intervals do not share a runner (see the reconciler). */
export const STALE_RUNNER_INTERVALS = 3;

export function managedClusterReconciler<R>(o: ManagedClusterReconcilerOptions<R>): Reconciler {
  const runners = new Map<string, { fingerprint: string; clients: ClusterClients; runner: R; lastRunAt: number }>();
  const writeConditions =
    o.conditions === false ? async () => {} : (o.conditionWriter ?? clusterConditionWriter({ clusters: o.clusters, clock: o.clock, log: o.log }));
  const next = (): ReconcileResult => jitteredRequeue(o.intervalMs, o.random);
  return async (key, signal) => {
    const mc = o.cached ? cachedOrForget(o.cached, key, runners) : await getClusterOrForget(o.clusters, key, runners);
    if (!mc) return {};
    const scope = scopeOf(mc);
    const skip = o.skip(mc, scope);
    if (skip) {
      o.log.debug({ cluster: key, reason: skip }, `${o.component}: skipped`);
      await o.skipped?.(mc, skip);
      return mc.metadata.deletionTimestamp ? {} : next();
    }
    const id = `${key}#${mc.metadata.uid ?? ''}`;
    const fingerprint = scopeFingerprint(scope);
    // The fence (signal) guards the condition write; the deadline only the run's own calls.
    const limit = o.deadlineMs === undefined ? undefined : deadline(o.clock, o.deadlineMs, `${o.component} run of ${key}`, signal);
    const callSignal = limit?.signal ?? signal;
    let out: Awaited<ReturnType<typeof o.run>>;
    try {
      let hit = runners.get(id);
      // A runner that has not run for several intervals holds memories (routegc's first sightings,
      // flight's reboot clocks) of a view this replica stopped watching: after a lost and regained
      // lease, or a shard label that moved the cluster away and back. Such memories are not evidence
      // for a second sighting now, so the runner starts over.
      const now = o.clock.now();
      if (hit && now - hit.lastRunAt > STALE_RUNNER_INTERVALS * o.intervalMs) {
        o.log.info({ cluster: key, idleMs: now - hit.lastRunAt }, `${o.component}: state of an earlier run is too old to trust; starting over`);
        hit = undefined;
      }
      // Asked every run (the Secret versions cache makes it free while nothing changed): a rotated
      // Secret or a changed *SecretRef is used from this run on, and a new credential that does not
      // work fails this run, reported, instead of leaving the old clients at work.
      const clients = await o.clients(mc, callSignal);
      if (hit?.fingerprint !== fingerprint || hit.clients.kube !== clients.kube || hit.clients.openstack !== clients.openstack) {
        const previous = hit?.fingerprint === fingerprint ? hit.runner : undefined;
        if (previous) o.log.info({ cluster: key }, `${o.component}: the cluster's credentials changed; clients rebuilt from them`);
        hit = { fingerprint, clients, runner: o.build(contextWith(mc, clients, o), previous), lastRunAt: now };
        runners.set(id, hit);
      }
      hit.lastRunAt = now;
      out = await o.run(hit.runner, { mc, scope }, callSignal);
    } catch (err) {
      if (signal.aborted) throw err;
      // A run cut by its deadline reports the deadline, not whichever call it interrupted.
      const cause = limit?.expired ? callSignal.reason : err;
      await writeConditions(mc, o.failed(cause), signal);
      throw cause;
    } finally {
      limit?.clear();
    }
    await writeConditions(mc, out.wishes, signal);
    return out.requeueAfterMs !== undefined ? { requeueAfterMs: out.requeueAfterMs } : mc.metadata.deletionTimestamp ? {} : next();
  };
}
