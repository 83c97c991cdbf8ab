// The route clean-up at cluster termination, as deorbit's last check before its finalizer goes:
// one removal pass of every route in the cluster CIDR (routegc's RouteGcRunner.removeAll), then
// decideRouteTermination says whether to finish or to look again at the next deorbit poll.
import type { Clock } from '../../base/clock.ts';
import { describeError } from '../../base/errors.ts';
import type { Logger } from '../../base/logger.ts';
import type { EventSink } from '../../clients/kube/event-recorder.ts';
import type { BeforeFinish } from '../managed-cluster/deorbit-reconciler.ts';
import { DEORBIT_CONDITION } from '../managed-cluster/managed-cluster.ts';
import type { ClusterClientSource } from '../managed-cluster/cluster-clients.ts';
import { terminationRefusal } from '../managed-cluster/cluster-gate.ts';
import { clusterContext } from '../managed-cluster/cluster-runners.ts';
import { routeGcRunnerFor } from '../routegc/routegc-reconciler.ts';
import type { RouteGcMetrics } from '../routegc/routegc-metrics.ts';
import { WAITING_FOR_ROUTES, decideRouteTermination } from './decide-route-termination.ts';

export interface RouteTerminationGateOptions {
  clients: ClusterClientSource;
  events: EventSink;
  metrics: RouteGcMetrics;
  dryRun: boolean;
  routeLimit: number;
  /** deorbit's: give up this long after deletion. */
  hangTimeoutMs: number;
  /** deorbit's poll interval. */
  pollMs: number;
  clock: Clock;
  log: Logger;
}

export function routeTerminationGate(o: RouteTerminationGateOptions): BeforeFinish {
  return async (mc, outcome, signal) => {
    const routerId = mc.spec.openstack?.routerID;
    const clusterCidr = mc.spec.clusterCIDR;
    // The same rule as deorbit's and routegc's own termination clean-up: an Orphan cluster keeps its routes.
    if (terminationRefusal(mc) || !routerId || !clusterCidr) return { finish: true };
    const cluster = `${mc.metadata.namespace ?? 'default'}/${mc.metadata.name}`;
    let left: string[] | undefined;
    let error: string | undefined;
    try {
      const ctx = await clusterContext(mc, { clients: o.clients, events: o.events, clock: o.clock, log: o.log, component: 'kubeward-deorbit' });
      const runner = routeGcRunnerFor(ctx, { metrics: o.metrics, dryRun: o.dryRun, routeLimit: o.routeLimit }, o.log, o.clock);
      // One pass (write, then read back); the wait between passes is deorbit's poll, not a sleep here.
      left = (await runner.removeAll(o.clock, { timeoutMs: 0, pollMs: 0, signal })).map((r) => `${r.destination} via ${r.nexthop}`);
    } catch (err) {
      error = describeError(err);
      o.log.warn({ cluster, err: error }, 'termination route clean-up: cannot read or change the router; retrying');
    }
    const d = decideRouteTermination({
      outcome,
      dryRun: o.dryRun,
      routerId,
      left,
      error,
      alreadyWaiting: mc.status?.conditions?.some((c) => c.type === DEORBIT_CONDITION && c.reason === WAITING_FOR_ROUTES) ?? false,
      nowMs: o.clock.now(),
      deletionStartedMs: Date.parse(mc.metadata.deletionTimestamp ?? new Date(o.clock.now()).toISOString()),
      hangTimeoutMs: o.hangTimeoutMs,
      pollMs: o.pollMs,
    });
    return d.finish
      ? { finish: true, events: d.events }
      : { finish: false, events: d.events, requeueAfterMs: d.requeueAfterMs, reason: d.reason, message: d.message };
  };
}
