// routegc inside `kubeward operator`: a Reconciler for the runtime's work queue, one RouteGcRunner
// (and its two-sighting memory) per ManagedCluster, requeued every interval with 0-50 % jitter.
// A ManagedCluster being deleted has all its routes removed (termination clean-up), re-checked until none is left.
import type { Clock } from '../../base/clock.ts';
import type { Logger } from '../../base/logger.ts';
import { EventRecorder, type EventSink } from '../../clients/kube/event-recorder.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import type { ReconcileResult, Reconciler } from '../runtime/controller.ts';
import { getClusterOrForget, jitteredRequeue } from './cluster-lookup.ts';
import { kubeClusterNodes, openStackRouteGcCloud } from './cluster-adapters.ts';
import type { ClusterClientSource, ManagedClusterView } from './cluster-clients.ts';
import { routeGcConditions } from './cluster-conditions.ts';
import { eventEmitter } from './cluster-events.ts';
import { skipReason } from './cluster-gate.ts';
import { RouteGcRunner, type RouteGcCycleResult } from './routegc-cycle.ts';
import { clusterConditionWriter } from './cluster-status.ts';
import type { RouteGcMetrics } from './routegc-metrics.ts';
import { RouteWriter } from './route-writer.ts';

export interface RouteGcReconcilerOptions {
  clusters: ResourceClient<ManagedClusterView>;
  clients: ClusterClientSource;
  /** Events on the ManagedCluster, in the management cluster. */
  events: EventSink;
  metrics: RouteGcMetrics;
  clock: Clock;
  log: Logger;
  intervalMs: number;
  dryRun?: boolean;
  routeLimit?: number;
  /** Warn when fewer free route slots than this remain (default 3). */
  routeLimitHeadroom?: number;
  /** Poll interval of the termination clean-up (default 15 s). */
  cleanupPollMs?: number;
  random?: () => number;
  /** Keep the RouteLimitApproaching and RouteGCHealthy conditions in the ManagedCluster's status (default true). */
  conditions?: boolean;
}

export function routeGcReconciler(o: RouteGcReconcilerOptions): Reconciler {
  const runners = new Map<string, { fingerprint: string; runner: RouteGcRunner }>();
  const next = (): ReconcileResult => jitteredRequeue(o.intervalMs, o.random);
  const writeConditions = o.conditions === false ? async () => {} : clusterConditionWriter({ clusters: o.clusters, clock: o.clock, log: o.log });
  return async (key, signal) => {
    const mc = await getClusterOrForget(o.clusters, key, runners);
    if (!mc) return {};
    const routerId = mc.spec.openstack?.routerID;
    const clusterCidr = mc.spec.clusterCIDR;
    const deleting = mc.metadata.deletionTimestamp !== undefined;
    const skip = deleting ? (mc.spec.noCloud ? 'noCloud' : undefined) : skipReason({ phase: mc.status?.phase, noCloud: mc.spec.noCloud });
    if (skip || !routerId || !clusterCidr) {
      o.log.debug({ cluster: key, reason: skip ?? 'no router or cluster CIDR in the spec' }, 'routegc: skipped');
      return deleting ? {} : next();
    }
    const runner = await runnerFor(mc, key, routerId, clusterCidr);
    if (deleting) {
      const left = await runner.removeAll(o.clock, { timeoutMs: 0, pollMs: 0, signal });
      return left.length ? { requeueAfterMs: o.cleanupPollMs ?? 15_000 } : {};
    }
    let result: RouteGcCycleResult;
    try {
      result = await runner.cycle(signal);
    } catch (err) {
      await writeConditions(mc, routeGcConditions({ error: err }, o.dryRun ?? false));
      throw err;
    }
    await writeConditions(mc, routeGcConditions({ result }, o.dryRun ?? false));
    return next();
  };

  async function runnerFor(mc: ManagedClusterView, key: string, routerId: string, clusterCidr: string): Promise<RouteGcRunner> {
    const clients = await o.clients(mc);
    const fingerprint = `${routerId}/${clusterCidr}`;
    const id = `${key}#${mc.metadata.uid ?? ''}`;
    const hit = runners.get(id);
    if (hit?.fingerprint === fingerprint) return hit.runner;
    const nodeEvents = new EventRecorder({ events: clients.kube.events, component: 'kubeward-routegc', clock: o.clock, log: o.log });
    const runner = new RouteGcRunner(
      {
        cloud: openStackRouteGcCloud(clients.openstack),
        writer: new RouteWriter(clients.openstack.neutron),
        nodes: kubeClusterNodes(clients.kube),
        emit: eventEmitter(o.log.child({ cluster: key }), { cluster: { sink: o.events, object: mc }, nodes: nodeEvents }),
        metrics: o.metrics,
        log: o.log,
      },
      { cluster: key, routerId, clusterCidr, namePrefixes: [`kks-${mc.metadata.name}-`], routeLimit: o.routeLimit ?? 30, routeLimitHeadroom: o.routeLimitHeadroom, dryRun: o.dryRun ?? false },
    );
    runners.set(id, { fingerprint, runner });
    return runner;
  }
}
