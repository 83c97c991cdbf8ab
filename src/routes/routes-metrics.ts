// Prometheus metrics of kubeward routes, registered on the process's own registry.
import { Counter, Gauge, Histogram, type Registry } from '../admin/metrics.ts';

export interface RoutesMetrics {
  applies: Counter<'result'>;
  applySeconds: Histogram;
  driftRepairs: Counter;
  generation: Gauge;
  vipUp: Gauge<'vip'>;
  conflictingRoutes: Gauge;
  conflictingRoutesRemoved: Counter;
  metadataReads: Counter<'result'>;
  badStateFiles: Gauge;
  syncFailures: Counter;
  auxiliaryFailures: Counter<'check'>;
  downPeerRedirects: Gauge;
}

export function createRoutesMetrics(registry: Registry): RoutesMetrics {
  const registers = [registry];
  return {
    applies: new Counter({ name: 'kubeward_routes_applies_total', help: 'Rule applies, by result (ok or error)', labelNames: ['result'], registers }),
    applySeconds: new Histogram({
      name: 'kubeward_routes_apply_seconds',
      help: 'Time to apply one ruleset (both families)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    driftRepairs: new Counter({ name: 'kubeward_routes_drift_repairs_total', help: 'Times our rules were found changed or gone and restored', registers }),
    generation: new Gauge({ name: 'kubeward_routes_rule_generation', help: 'Increases with every ruleset change applied', registers }),
    vipUp: new Gauge({ name: 'kubeward_routes_vip_up', help: '1 while the node own traffic to the VIP is redirected locally', labelNames: ['vip'], registers }),
    conflictingRoutes: new Gauge({
      name: 'kubeward_routes_conflicting_routes',
      help: 'Local proto 66 routes for managed VIPs found at the last check (they defeat the rules)',
      registers,
    }),
    conflictingRoutesRemoved: new Counter({ name: 'kubeward_routes_conflicting_routes_removed_total', help: 'Conflicting local routes removed', registers }),
    metadataReads: new Counter({ name: 'kubeward_routes_metadata_reads_total', help: 'GCP metadata reads, by result', labelNames: ['result'], registers }),
    badStateFiles: new Gauge({
      name: 'kubeward_routes_bad_state_files',
      help: 'Files in the state directory skipped at the last sync: name not a valid VIP, or too large',
      registers,
    }),
    syncFailures: new Counter({ name: 'kubeward_routes_sync_failures_total', help: 'Syncs that failed (retried with backoff by one timer)', registers }),
    auxiliaryFailures: new Counter({
      name: 'kubeward_routes_auxiliary_check_failures_total',
      help: 'Best-effort checks that failed (conflicting local routes, foreign tables, heartbeat directory); rules are applied regardless',
      labelNames: ['check'],
      registers,
    }),
    downPeerRedirects: new Gauge({
      name: 'kubeward_routes_down_peer_redirects',
      help: 'Down VIPs whose node-originated new connections go to a healthy peer apiserver (--down-peer)',
      registers,
    }),
  };
}
