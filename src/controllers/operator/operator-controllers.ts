// The operator's controllers, built from its options: deorbit, routegc and flight, each a runtime
// Controller with its own work queue on the shared ManagedCluster informer, and a rule for which
// informer events enqueue it. With deorbit and routegc both running, a deleted cluster's routes are
// removed as deorbit's last step (route-termination-gate.ts), and routegc leaves such a cluster alone.
import { KubewardError } from '../../base/errors.ts';
import type { Clock } from '../../base/clock.ts';
import type { Logger } from '../../base/logger.ts';
import type { EventSink } from '../../clients/kube/event-recorder.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import type { DeorbitSettings } from '../deorbit/deorbit-types.ts';
import { flightReconciler, type FlightSettings } from '../flight/flight-reconciler.ts';
import type { FlightMetrics } from '../flight/flight-metrics.ts';
import type { ClusterConnector } from '../managed-cluster/cluster-connector.ts';
import { deorbitReconciler } from '../managed-cluster/deorbit-reconciler.ts';
import { clusterConditionWriter } from '../managed-cluster/cluster-status.ts';
import { roundReads } from '../managed-cluster/round-reads.ts';
import { DEORBIT_FINALIZER, type ManagedCluster } from '../managed-cluster/managed-cluster.ts';
import type { ClusterClientSource } from '../managed-cluster/cluster-clients.ts';
import { routeGcReconciler } from '../routegc/routegc-reconciler.ts';
import type { RouteGcMetrics } from '../routegc/routegc-metrics.ts';
import { Controller, type Reconciler } from '../runtime/controller.ts';
import type { ControllerMetrics } from '../runtime/controller-metrics.ts';
import { isCycleTrigger, isDeorbitTrigger, isRouteGcTrigger } from './cycle-trigger.ts';
import { decideLifecycle } from '../managed-cluster/deorbit-lifecycle.ts';
import { DEORBIT_SLOT_MS, FIRST_CONDITIONS_GATHER_MS, runDeadlineMs, SLOT_GRACE_MS, workersFor } from './operator-scale.ts';
import { routeTerminationGate } from './route-termination-gate.ts';

export type ControllerName = 'deorbit' | 'routegc' | 'flight';

export interface RouteGcOperatorSettings {
  metrics: RouteGcMetrics;
  /** Time between cycles of one cluster (plus 0-50 % jitter). */
  intervalMs: number;
  dryRun: boolean;
  routeLimit: number;
  routeLimitHeadroom: number;
  /** Route removals per cluster and cycle (default 3). */
  maxRemovalsPerCycle?: number;
  /** Least time between the two sightings of a removal (the CLI floors it at 10 s). */
  confirmAfterMs?: number;
  /** Poll interval of the termination clean-up when routegc does it alone (default 15 s). */
  cleanupPollMs?: number;
}

export interface FlightOperatorSettings {
  metrics: FlightMetrics;
  intervalMs: number;
  settings: Partial<FlightSettings>;
}

export interface ControllerDeps {
  clusters: ResourceClient<ManagedCluster>;
  events: EventSink;
  clock: Clock;
  log: Logger;
  metrics: ControllerMetrics;
  workers?: number;
  resyncMs?: number;
  listKeys: () => string[];
  /** ManagedClusters this replica handles now (the workers follow it). */
  clusterCount: () => number;
  /** The informer's copy of a ManagedCluster, by key. */
  cached: (key: string) => ManagedCluster | undefined;
  /** Every ManagedCluster in the informer (all shards'): flight's namesakes are read from it. */
  cachedList?: () => ManagedCluster[];
  /** deorbit's ports. */
  connector: ClusterConnector;
  deorbit: DeorbitSettings;
  /** routegc's and flight's clients (one cache, one Keystone session per cluster between them). */
  clients?: ClusterClientSource;
  routegc?: RouteGcOperatorSettings;
  flight?: FlightOperatorSettings;
  random?: () => number;
  /** Sharding: a key this returns false for is not reconciled (and not requeued); undefined: every key. */
  admits?: (key: string) => boolean;
}

export interface OperatorController {
  controller: Controller;
  /** Whether an informer event for this object enqueues it. */
  wants: (obj: ManagedCluster, old?: ManagedCluster) => boolean;
}

export function buildControllers(names: readonly ControllerName[], d: ControllerDeps): OperatorController[] {
  const out: OperatorController[] = [];
  // Workers follow the number of clusters, and a run past its deadline frees its worker, so a few
  // hung clusters never hold a controller (operator-scale.ts).
  const least = d.workers ?? 4;
  const admits = d.admits;
  const make = (name: ControllerName, inner: Reconciler, resyncMs: number, slotTimeoutMs: number) => {
    // Sharding: a key this shard no longer owns is dropped (not run, not requeued).
    const reconcile: Reconciler = admits ? async (key, signal) => (admits(key) ? inner(key, signal) : {}) : inner;
    return new Controller({
      name,
      reconcile,
      clock: d.clock,
      log: d.log,
      metrics: d.metrics,
      workers: least,
      workersFor: () => workersFor(d.clusterCount(), least),
      slotTimeoutMs,
      resyncMs,
      listKeys: d.listKeys,
    });
  };
  // One status writer for routegc and flight: their conditions of one cluster go out merged, one write at a time.
  // With both running, a cluster's first conditions of the two go out as one write (cluster-status.ts gather).
  const both = names.includes('routegc') && names.includes('flight');
  const conditionWriter = clusterConditionWriter({
    clusters: d.clusters,
    clock: d.clock,
    log: d.log,
    cached: d.cached,
    gather: both ? { writers: 2, gatherMs: FIRST_CONDITIONS_GATHER_MS } : undefined,
  });
  // One read of the router, the servers and the Nodes per cluster and round for both (round-reads.ts).
  const reads = both ? roundReads({ clock: d.clock }) : undefined;
  const deorbitCleansRoutes = names.includes('deorbit') && names.includes('routegc');
  if (names.includes('deorbit')) {
    const log = d.log.child({ controller: 'deorbit' });
    const beforeFinish = deorbitCleansRoutes
      ? routeTerminationGate({
          clients: required(d.clients, 'routegc'),
          events: d.events,
          metrics: required(d.routegc, 'routegc').metrics,
          dryRun: d.routegc!.dryRun,
          routeLimit: d.routegc!.routeLimit,
          hangTimeoutMs: d.deorbit.hangTimeoutMs,
          pollMs: d.deorbit.pollIntervalMs,
          clock: d.clock,
          log,
        })
      : undefined;
    const reconcile = deorbitReconciler({
      clusters: d.clusters,
      connector: d.connector,
      events: d.events,
      settings: d.deorbit,
      clock: d.clock,
      log,
      beforeFinish,
    });
    // A cluster the cache shows alive with nothing for deorbit to do costs no read (start, resync).
    const fromCache: Reconciler = async (key, signal) => {
      const mc = d.cached(key);
      if (mc && !mc.metadata.deletionTimestamp && decideLifecycle(mc) === 'none') return {};
      return reconcile(key, signal);
    };
    out.push({ controller: make('deorbit', fromCache, d.resyncMs ?? 300_000, DEORBIT_SLOT_MS), wants: isDeorbitTrigger });
  }
  // routegc and flight requeue themselves every interval, so they need no resync, and only changes
  // that matter to them start a cycle early (see cycle-trigger.ts).
  if (names.includes('routegc')) {
    const s = required(d.routegc, 'routegc');
    const reconcile = routeGcReconciler({
      clusters: d.clusters,
      clients: required(d.clients, 'routegc'),
      events: d.events,
      metrics: s.metrics,
      clock: d.clock,
      log: d.log.child({ controller: 'routegc' }),
      intervalMs: s.intervalMs,
      dryRun: s.dryRun,
      routeLimit: s.routeLimit,
      routeLimitHeadroom: s.routeLimitHeadroom,
      maxRemovalsPerCycle: s.maxRemovalsPerCycle,
      confirmAfterMs: s.confirmAfterMs,
      cleanupPollMs: s.cleanupPollMs,
      random: d.random,
      deadlineMs: runDeadlineMs(s.intervalMs),
      conditionWriter,
      cached: d.cached,
      reads,
    });
    // A cluster deorbit is terminating (protected ones included) gets its routes removed by deorbit,
    // after its LBs and volumes are gone; routegc alone would remove them at once. Once deorbit let
    // an Orphan cluster go, routegc's own gate (terminationRefusal) leaves its routes alone.
    const leftToDeorbit = (key: string): boolean => {
      const mc = d.cached(key);
      return deorbitCleansRoutes && mc?.metadata.deletionTimestamp !== undefined && (mc.metadata.finalizers?.includes(DEORBIT_FINALIZER) ?? false);
    };
    const gated: Reconciler = async (key, signal) => (leftToDeorbit(key) ? {} : reconcile(key, signal));
    out.push({ controller: make('routegc', gated, 0, runDeadlineMs(s.intervalMs) + SLOT_GRACE_MS), wants: isRouteGcTrigger });
  }
  if (names.includes('flight')) {
    const s = required(d.flight, 'flight');
    const reconcile = flightReconciler({
      clusters: d.clusters,
      clients: required(d.clients, 'flight'),
      events: d.events,
      metrics: s.metrics,
      clock: d.clock,
      log: d.log.child({ controller: 'flight' }),
      intervalMs: s.intervalMs,
      settings: s.settings,
      random: d.random,
      deadlineMs: runDeadlineMs(s.intervalMs),
      conditionWriter,
      cached: d.cached,
      cachedList: d.cachedList,
      reads,
    });
    out.push({ controller: make('flight', reconcile, 0, runDeadlineMs(s.intervalMs) + SLOT_GRACE_MS), wants: isCycleTrigger });
  }
  return out;
}

function required<T>(v: T | undefined, controller: ControllerName): T {
  if (v === undefined) throw new KubewardError('E_CONFIG', `the ${controller} controller needs its settings and the cluster clients`);
  return v;
}
