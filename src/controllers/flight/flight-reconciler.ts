// flight inside `kubeward operator`: a Reconciler for the runtime's work queue, one FlightRunner (and
// its reboot timeline) per ManagedCluster, only while the cluster is Running, every interval + jitter.
import type { Clock } from '../../base/clock.ts';
import type { Logger } from '../../base/logger.ts';
import { EventRecorder, type EventSink } from '../../clients/kube/event-recorder.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import type { ReconcileResult, Reconciler } from '../runtime/controller.ts';
import { getClusterOrForget, jitteredRequeue } from '../routegc/cluster-lookup.ts';
import { kubeClusterNodes } from '../routegc/cluster-adapters.ts';
import type { ClusterClientSource, ManagedClusterView } from '../routegc/cluster-clients.ts';
import { flightConditions } from '../routegc/cluster-conditions.ts';
import { eventEmitter } from '../routegc/cluster-events.ts';
import { clusterConditionWriter } from '../routegc/cluster-status.ts';
import { skipReason } from '../routegc/cluster-gate.ts';
import { RouteWriter } from '../routegc/route-writer.ts';
import { DEFAULT_FLIGHT_TIMING } from './decide-flight.ts';
import { openStackFlightCloud } from './flight-cloud.ts';
import type { FlightMetrics } from './flight-metrics.ts';
import { FlightRunner, type FlightRoundResult, type FlightTarget } from './flight-round.ts';

/** Operator-wide settings; the cluster's own values come from its ManagedCluster. */
export type FlightSettings = Omit<FlightTarget, 'clusterName' | 'clusterCidr' | 'securityGroupName' | 'pools' | 'routerId'>;

export const DEFAULT_FLIGHT_SETTINGS: FlightSettings = {
  ...DEFAULT_FLIGHT_TIMING,
  rebootBeforeDelete: true,
  wantedRoles: ['member', 'network_admin'],
  forceSecurityGroupResync: false,
  repairMissingRoutes: false,
  routeLimit: 30,
  // The cluster's service user cannot grant itself roles; the operator reports them instead.
  checkRoles: false,
  dryRun: false,
};

export interface FlightReconcilerOptions {
  clusters: ResourceClient<ManagedClusterView>;
  clients: ClusterClientSource;
  events: EventSink;
  metrics: FlightMetrics;
  clock: Clock;
  log: Logger;
  intervalMs: number;
  settings?: Partial<FlightSettings>;
  random?: () => number;
  /** Keep the FlightHealthy condition in the ManagedCluster's status (default true). */
  conditions?: boolean;
}

export function flightReconciler(o: FlightReconcilerOptions): Reconciler {
  const runners = new Map<string, { fingerprint: string; runner: FlightRunner }>();
  const next = (): ReconcileResult => jitteredRequeue(o.intervalMs, o.random);
  const writeConditions = o.conditions === false ? async () => {} : clusterConditionWriter({ clusters: o.clusters, clock: o.clock, log: o.log });
  return async (key, signal) => {
    const mc = await getClusterOrForget(o.clusters, key, runners);
    if (!mc) return {};
    const skip = skipReason({ phase: mc.status?.phase, noCloud: mc.spec.noCloud, deleting: mc.metadata.deletionTimestamp !== undefined });
    if (skip) {
      o.log.debug({ cluster: key, reason: skip }, 'flight: skipped');
      return mc.metadata.deletionTimestamp ? {} : next();
    }
    const runner = await runnerFor(mc, key);
    let r: FlightRoundResult;
    try {
      r = await runner.round(signal);
    } catch (err) {
      await writeConditions(mc, flightConditions({ error: err }));
      throw err;
    }
    await writeConditions(mc, flightConditions({ round: { done: r.done, failed: r.failed, findings: r.plan.findings, nodeConditions: r.plan.conditions } }));
    return next();
  };

  async function runnerFor(mc: ManagedClusterView, key: string): Promise<FlightRunner> {
    const clients = await o.clients(mc);
    const s = mc.spec;
    const target: FlightTarget = {
      ...DEFAULT_FLIGHT_SETTINGS,
      ...o.settings,
      clusterName: mc.metadata.name,
      clusterCidr: s.clusterCIDR ?? '',
      securityGroupName: s.openstack?.securityGroupName ?? `${mc.metadata.name}-sg`,
      pools: (s.nodePools ?? []).map((p) => ({ name: p.name, prefix: `kks-${mc.metadata.name}-${p.name}-` })),
      routerId: s.openstack?.routerID,
    };
    const fingerprint = JSON.stringify([target.clusterCidr, target.securityGroupName, target.pools, target.routerId]);
    const id = `${key}#${mc.metadata.uid ?? ''}`;
    const hit = runners.get(id);
    if (hit?.fingerprint === fingerprint) return hit.runner;
    const nodeEvents = new EventRecorder({ events: clients.kube.events, component: 'kubeward-flight', clock: o.clock, log: o.log });
    const runner = new FlightRunner(
      {
        cloud: openStackFlightCloud(clients.openstack),
        nodes: kubeClusterNodes(clients.kube),
        routes: new RouteWriter(clients.openstack.neutron),
        emit: eventEmitter(o.log.child({ cluster: key }), { cluster: { sink: o.events, object: mc }, nodes: nodeEvents }),
        metrics: o.metrics,
        log: o.log,
        clock: o.clock,
      },
      target,
    );
    runners.set(id, { fingerprint, runner });
    return runner;
  }
}
