// routegc inside `kubeward operator`: one RouteGcRunner (and its two-sighting memory) per
// ManagedCluster, built through the shared cluster runners, requeued every interval with 0-50 %
// jitter. A ManagedCluster being deleted has all its routes removed (termination clean-up),
// re-checked until none is left, but only when deorbit's rule asks for a clean-up (deletionPolicy
// Delete, or Terminating: cluster-gate.ts terminationRefusal); an Orphan cluster keeps its routes.
import type { Clock } from '../../base/clock.ts';
import type { Logger } from '../../base/logger.ts';
import type { EventSink } from '../../clients/kube/event-recorder.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import type { Reconciler } from '../runtime/controller.ts';
import type { ClusterClientSource } from '../managed-cluster/cluster-clients.ts';
import { skipReason, terminationRefusal } from '../managed-cluster/cluster-gate.ts';
import type { ClusterConditionWriter } from '../managed-cluster/cluster-status.ts';
import { managedClusterReconciler, type ClusterContext } from '../managed-cluster/cluster-runners.ts';
import type { ManagedCluster } from '../managed-cluster/managed-cluster.ts';
import { scopeOf } from '../managed-cluster/cluster-scope.ts';
import { RouteWriter } from '../managed-cluster/route-writer.ts';
import { openStackRouteGcCloud } from './routegc-cloud.ts';
import { routeGcConditions } from './routegc-conditions.ts';
import { RouteGcRunner } from './routegc-cycle.ts';
import { firstCycleOnly, roundReadCluster, sharedCloud, sharedNodeList, type RoundReads } from '../managed-cluster/round-reads.ts';
import { DEFAULT_ROUTE_LIMIT } from './decide-routegc.ts';
import type { RouteGcMetrics } from './routegc-metrics.ts';

/** A deleted ManagedCluster whose deletionPolicy is Orphan: its routes stay (as deorbit's DeorbitSkipped). */
export const ROUTEGC_TERMINATION_SKIPPED_REASON = 'RouteGCTerminationSkipped';

/** Operator-wide routegc settings; the cluster's own router, CIDR and pools come from its spec. */
export interface RouteGcSettings {
  metrics: RouteGcMetrics;
  /** Report what would be removed, remove nothing (default false). */
  dryRun?: boolean;
  /** Neutron max_routes (default DEFAULT_ROUTE_LIMIT). */
  routeLimit?: number;
  /** Warn when fewer free route slots than this remain (default 3). */
  routeLimitHeadroom?: number;
  /** Removals per cluster and cycle (default 3). */
  maxRemovalsPerCycle?: number;
  /** Least time between the two sightings of a removal (default 0: the next cycle, an interval later). */
  confirmAfterMs?: number;
}

/** The one way routegc's runner for a cluster is built (reconciler and termination clean-up alike). */
export function routeGcRunnerFor(
  ctx: ClusterContext,
  s: RouteGcSettings,
  log: Logger,
  clock: Clock,
  reads?: RoundReads,
  previous?: RouteGcRunner,
): RouteGcRunner {
  const own = openStackRouteGcCloud(ctx.clients.openstack);
  const read = reads && firstCycleOnly(reads.of(roundReadCluster(ctx.scope.key, ctx.mc.metadata.uid), 'routegc'));
  return new RouteGcRunner(
    {
      cloud: read ? sharedCloud(own, read) : own,
      writer: new RouteWriter(ctx.clients.openstack.neutron),
      nodes: read ? sharedNodeList(ctx.nodes, read) : ctx.nodes,
      emit: ctx.emit,
      metrics: s.metrics,
      log,
      clock,
    },
    {
      cluster: ctx.scope.key,
      routerId: ctx.scope.routerId ?? '',
      clusterCidr: ctx.scope.clusterCidr ?? '',
      forceClusterCidr: ctx.scope.forceClusterCidr,
      identity: ctx.scope.identity,
      routeLimit: s.routeLimit ?? DEFAULT_ROUTE_LIMIT,
      routeLimitHeadroom: s.routeLimitHeadroom,
      maxRemovalsPerCycle: s.maxRemovalsPerCycle,
      confirmAfterMs: s.confirmAfterMs,
      dryRun: s.dryRun ?? false,
    },
    previous?.memory,
  );
}

export interface RouteGcReconcilerOptions extends RouteGcSettings {
  clusters: ResourceClient<ManagedCluster>;
  clients: ClusterClientSource;
  /** Events on the ManagedCluster, in the management cluster. */
  events: EventSink;
  clock: Clock;
  log: Logger;
  intervalMs: number;
  /** Poll interval of the termination clean-up (default 15 s). */
  cleanupPollMs?: number;
  random?: () => number;
  /** Every call of one run is aborted after this long (default: none). */
  deadlineMs?: number;
  /** The informer's copy of a ManagedCluster by key (operator); default: read from the API. */
  cached?: (key: string) => ManagedCluster | undefined;
  /** The process's one ManagedCluster status writer (operator); default: one of this reconciler's own. */
  conditionWriter?: ClusterConditionWriter;
  /** Keep the RouteLimitApproaching and RouteGCHealthy conditions in the ManagedCluster's status (default true). */
  conditions?: boolean;
  /** The router, servers and Nodes read once per cluster and round for routegc and flight (operator); default: each cycle reads its own. */
  reads?: RoundReads;
}

export function routeGcReconciler(o: RouteGcReconcilerOptions): Reconciler {
  // Two sightings one interval apart: cycle-trigger.ts keeps status writes from starting cycles early.
  const settings: RouteGcSettings = o;
  return managedClusterReconciler<RouteGcRunner>({
    ...o,
    component: 'kubeward-routegc',
    skip: (mc, scope) => {
      const deleting = mc.metadata.deletionTimestamp !== undefined;
      const gate = deleting ? terminationRefusal(mc)?.message : skipReason({ phase: mc.status?.phase, noCloud: mc.spec.noCloud });
      return gate ?? (scope.routerId && scope.clusterCidr ? undefined : 'no router or cluster CIDR in the spec');
    },
    skipped: async (mc, reason) => {
      const refusal = mc.metadata.deletionTimestamp === undefined ? undefined : terminationRefusal(mc)?.code;
      if (refusal !== 'DeletionPolicyOrphan' && refusal !== 'TerminationProtected') return;
      o.metrics.refused.inc({ cluster: scopeOf(mc).key, reason: refusal });
      await o.events.record(mc, 'Normal', ROUTEGC_TERMINATION_SKIPPED_REASON, `termination route clean-up skipped: ${reason}`);
    },
    build: (ctx, previous) => routeGcRunnerFor(ctx, settings, o.log, o.clock, o.reads, previous),
    run: async (runner, { mc }, signal) => {
      if (mc.metadata.deletionTimestamp !== undefined) {
        const left = await runner.removeAll(o.clock, { timeoutMs: 0, pollMs: 0, signal });
        return { wishes: [], requeueAfterMs: left.length ? (o.cleanupPollMs ?? 15_000) : undefined };
      }
      return { wishes: routeGcConditions({ result: await runner.cycle(signal) }, o.dryRun ?? false) };
    },
    failed: (error) => routeGcConditions({ error }, o.dryRun ?? false),
  });
}
