// flight inside `kubeward operator`: one FlightRunner (and its reboot timeline) per ManagedCluster,
// built through the shared cluster runners, only while the cluster is Running, every interval + jitter.
import type { Clock } from '../../base/clock.ts';
import type { Logger } from '../../base/logger.ts';
import type { EventSink } from '../../clients/kube/event-recorder.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import type { Reconciler } from '../runtime/controller.ts';
import type { ClusterClientSource } from '../managed-cluster/cluster-clients.ts';
import { skipReason } from '../managed-cluster/cluster-gate.ts';
import type { ClusterConditionWriter } from '../managed-cluster/cluster-status.ts';
import { managedClusterReconciler } from '../managed-cluster/cluster-runners.ts';
import type { ManagedCluster } from '../managed-cluster/managed-cluster.ts';
import { RouteWriter } from '../managed-cluster/route-writer.ts';
import { DEFAULT_FLIGHT_TIMING } from './decide-flight.ts';
import { DEFAULT_ROUTE_LIMIT } from '../routegc/decide-routegc.ts';
import { flightConditions } from './flight-conditions.ts';
import { openStackFlightCloud } from './flight-cloud.ts';
import { firstCycleOnly, roundReadCluster, sharedCloud, sharedNodeList, type RoundReads } from '../managed-cluster/round-reads.ts';
import type { FlightMetrics } from './flight-metrics.ts';
import { FlightRunner, type FlightTarget } from './flight-round.ts';

/** Operator-wide settings; the cluster's own values come from its ManagedCluster. */
export type FlightSettings = Omit<
  FlightTarget,
  'clusterName' | 'clusterCidr' | 'forceClusterCidr' | 'securityGroupName' | 'pools' | 'routerId' | 'ownerId' | 'ownerRef' | 'provisionerClaims' | 'adoptOwners'
>;

export const DEFAULT_FLIGHT_SETTINGS: FlightSettings = {
  ...DEFAULT_FLIGHT_TIMING,
  rebootBeforeDelete: true,
  wantedRoles: ['member', 'network_admin'],
  forceSecurityGroupResync: false,
  repairMissingRoutes: false,
  routeLimit: DEFAULT_ROUTE_LIMIT,
  // The cluster's service user cannot grant itself roles; the operator reports them instead.
  checkRoles: false,
  dryRun: false,
};

export interface FlightReconcilerOptions {
  clusters: ResourceClient<ManagedCluster>;
  clients: ClusterClientSource;
  events: EventSink;
  metrics: FlightMetrics;
  clock: Clock;
  log: Logger;
  intervalMs: number;
  settings?: Partial<FlightSettings>;
  random?: () => number;
  /** Every call of one run is aborted after this long (default: none). */
  deadlineMs?: number;
  /** The informer's copy of a ManagedCluster by key (operator); default: read from the API. */
  cached?: (key: string) => ManagedCluster | undefined;
  /** Every ManagedCluster in the informer (operator), for the namesakes; default: listed from the API each round. */
  cachedList?: () => ManagedCluster[];
  /** The process's one ManagedCluster status writer (operator); default: one of this reconciler's own. */
  conditionWriter?: ClusterConditionWriter;
  /** Keep the FlightHealthy condition in the ManagedCluster's status (default true). */
  conditions?: boolean;
  /** The router, servers and Nodes read once per cluster and round for routegc and flight (operator); default: each round reads its own. */
  reads?: RoundReads;
}

export function flightReconciler(o: FlightReconcilerOptions): Reconciler {
  return managedClusterReconciler<FlightRunner>({
    ...o,
    component: 'kubeward-flight',
    skip: (mc) => skipReason({ phase: mc.status?.phase, noCloud: mc.spec.noCloud, deleting: mc.metadata.deletionTimestamp !== undefined }),
    build: ({ mc, scope, clients, nodes, emit }, previous) => {
      if (scope.poolProblems.length) o.log.warn({ cluster: scope.key, problems: scope.poolProblems }, 'flight: these node pools protect no instance by name');
      if (scope.ownerMetadataProblem) o.log.warn({ cluster: scope.key, problem: scope.ownerMetadataProblem }, 'flight: the owner metadata proves nothing');
      const target: FlightTarget = {
        ...DEFAULT_FLIGHT_SETTINGS,
        ...o.settings,
        clusterName: scope.clusterName,
        ownerId: scope.identity.ownerId,
        ownerRef: scope.identity.ownerRef,
        provisionerClaims: [...(scope.identity.provisionerClaims ?? [])],
        adoptOwners: [...(scope.identity.adoptOwners ?? [])],
        clusterCidr: scope.clusterCidr ?? '',
        forceClusterCidr: scope.forceClusterCidr,
        securityGroupName: scope.securityGroupName,
        pools: scope.pools,
        routerId: scope.routerId,
      };
      const own = openStackFlightCloud(clients.openstack);
      const read = o.reads && firstCycleOnly(o.reads.of(roundReadCluster(scope.key, mc.metadata.uid), 'flight'));
      return new FlightRunner(
        {
          cloud: read ? sharedCloud(own, read) : own,
          nodes: read ? sharedNodeList(nodes, read) : nodes,
          routes: new RouteWriter(clients.openstack.neutron),
          emit,
          metrics: o.metrics,
          log: o.log,
          clock: o.clock,
          // Two ManagedClusters of one name (other namespaces) may share a project: a claim by name is theirs as much as ours.
          namesakes: async (signal) =>
            (o.cachedList ? o.cachedList() : (await o.clusters.list(undefined, {}, { signal })).items)
              .filter((x) => x.metadata.name === scope.clusterName && x.metadata.uid !== mc.metadata.uid)
              .map((x) => `${x.metadata.namespace ?? 'default'}/${x.metadata.name}`),
        },
        target,
        previous?.memory,
      );
    },
    run: async (runner, _ctx, signal) => {
      const r = await runner.round(signal);
      return {
        wishes: flightConditions({
          round: { done: r.done, failed: r.failed, findings: r.plan.findings, nodeConditions: r.plan.conditions, refusal: r.plan.refusal },
        }),
      };
    },
    failed: (error) => flightConditions({ error }),
  });
}
