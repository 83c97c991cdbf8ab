// routegc's metrics, labelled by cluster, on the mode's registry.
import { Counter, Gauge, type Registry } from 'prom-client';

export interface RouteGcMetrics {
  routesSeen: Gauge<'cluster'>;
  routesOrphaned: Gauge<'cluster'>;
  routesDuplicate: Gauge<'cluster'>;
  routeLimit: Gauge<'cluster'>;
  routeLimitApproaching: Gauge<'cluster'>;
  removed: Counter<'cluster' | 'reason'>;
  wouldRemove: Counter<'cluster' | 'reason'>;
  conflicts: Counter<'cluster'>;
  refused: Counter<'cluster' | 'reason'>;
  heldBack: Counter<'cluster' | 'kind'>;
  failedCycles: Counter<'cluster'>;
}

export function createRouteGcMetrics(registry: Registry): RouteGcMetrics {
  const registers = [registry];
  const gauge = (name: string, help: string) => new Gauge({ name, help, labelNames: ['cluster'], registers });
  const counter = <L extends string>(name: string, help: string, labelNames: L[]) => new Counter<L>({ name, help, labelNames, registers });
  return {
    routesSeen: gauge('kubeward_routegc_routes', "Routes on the cluster's router at the last cycle (all owners)."),
    routesOrphaned: gauge('kubeward_routegc_routes_orphaned', 'Routes of the cluster whose next hop is no instance or Node of it.'),
    routesDuplicate: gauge('kubeward_routegc_routes_duplicate', 'Routes losing a duplicate destination to the Node owning the pod CIDR.'),
    routeLimit: gauge('kubeward_routegc_route_limit', 'Neutron max_routes for the router (configured or learned from RoutesExhausted).'),
    routeLimitApproaching: gauge(
      'kubeward_routegc_route_limit_approaching',
      '1 while fewer than the headroom of free route slots are left on the router (the RouteLimitApproaching warning), else 0.',
    ),
    removed: counter('kubeward_routegc_routes_removed_total', 'Routes removed, by reason (orphaned, duplicate, termination).', ['cluster', 'reason']),
    wouldRemove: counter('kubeward_routegc_routes_would_remove_total', 'Routes a dry run would have removed.', ['cluster', 'reason']),
    conflicts: counter(
      'kubeward_routegc_conflicts_total',
      'Route writes another writer raced: 412 answers to If-Match updates, or plain full-list updates read back changed (and repaired).',
      ['cluster'],
    ),
    refused: counter(
      'kubeward_routegc_refused_cycles_total',
      'Cycles that removed nothing because the view was in doubt (reason: NodeListEmpty, InstanceListPartial, ClusterCIDRRefused, ...).',
      ['cluster', 'reason'],
    ),
    heldBack: counter('kubeward_routegc_budget_held_back_total', 'Confirmed removals a per-cycle budget held back to a later cycle, by kind.', [
      'cluster',
      'kind',
    ]),
    failedCycles: counter('kubeward_routegc_failed_cycles_total', 'Cycles that ended in an error (nothing half-done: the next cycle starts over).', [
      'cluster',
    ]),
  };
}
