// flight's metrics, labelled by cluster and repair, on the mode's registry.
import { Counter, Gauge, type Registry } from 'prom-client';

export interface FlightMetrics {
  /** result: done, failed, dry-run. */
  repairs: Counter<'cluster' | 'repair' | 'action' | 'result'>;
  findings: Gauge<'cluster' | 'reason'>;
  nodesWithRouteProblems: Gauge<'cluster' | 'condition'>;
  failedRounds: Counter<'cluster'>;
  /** Rounds that did nothing destructive because the view was in doubt, by reason. */
  refused: Counter<'cluster' | 'reason'>;
  /** Actions a per-round budget held back, by budget kind. */
  heldBack: Counter<'cluster' | 'kind'>;
}

export function createFlightMetrics(registry: Registry): FlightMetrics {
  const registers = [registry];
  return {
    repairs: new Counter({
      name: 'kubeward_flight_repairs_total',
      help: 'Repairs flight carried out, by repair, action and result (done, failed, dry-run).',
      labelNames: ['cluster', 'repair', 'action', 'result'],
      registers,
    }),
    findings: new Gauge({
      name: 'kubeward_flight_findings',
      help: 'Problems flight found and reports without repairing, at the last round.',
      labelNames: ['cluster', 'reason'],
      registers,
    }),
    nodesWithRouteProblems: new Gauge({
      name: 'kubeward_flight_nodes_with_route_problems',
      help: 'Nodes whose kubeward.io/RouteMissing or RouteConflict condition is True.',
      labelNames: ['cluster', 'condition'],
      registers,
    }),
    refused: new Counter({
      name: 'kubeward_flight_refused_rounds_total',
      help: 'Rounds that rebooted, deleted, labelled and opened nothing because the view was in doubt (reason: NodeListEmpty, NodeListShrunk, InstanceListPartial, ...).',
      labelNames: ['cluster', 'reason'],
      registers,
    }),
    heldBack: new Counter({
      name: 'kubeward_flight_budget_held_back_total',
      help: 'Actions a per-round budget held back to a later round, by kind (reboot, delete, metadata, rule).',
      labelNames: ['cluster', 'kind'],
      registers,
    }),
    failedRounds: new Counter({
      name: 'kubeward_flight_failed_rounds_total',
      help: "Rounds that could not observe the cluster's instances (nothing was repaired).",
      labelNames: ['cluster'],
      registers,
    }),
  };
}
