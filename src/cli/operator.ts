// kubeward operator: the composition root of the controllers that run for every ManagedCluster of
// a management cluster (deorbit, routegc, flight). Several replicas may run: one leads through a
// coordination.k8s.io Lease, the others wait with a warm cache. Settings:
// src/controllers/operator/operator-config.ts.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { systemClock } from '../base/clock.ts';
import { UsageError } from '../base/errors.ts';
import { createKubeApi } from '../clients/kube/kube-api.ts';
import { createOpenStackShared } from '../clients/openstack/create-openstack-client.ts';
import { loadKubeConfig, type KubeConfigSource } from '../clients/kube/load-kube-config.ts';
import { checkKubeConfigFiles } from '../clients/kube/check-kubeconfig-files.ts';
import { openStackCloudFactory, secretConnector } from '../controllers/managed-cluster/cluster-connector.ts';
import { Operator } from '../controllers/operator/operator.ts';
import { namespaceScope, operatorDeclaration, parseControllers, parseNamespaces } from '../controllers/operator/operator-config.ts';
import { createControllerMetrics } from '../controllers/runtime/controller-metrics.ts';
import { Gauge } from '../admin/metrics.ts';
import { secretClusterClients } from '../controllers/managed-cluster/cluster-clients.ts';
import { LeaseCallFence } from '../controllers/operator/lease-call-fence.ts';
import { SecretVersions } from '../controllers/managed-cluster/secret-versions.ts';
import { formatShard, shardLeaseName, summarizeShard } from '../controllers/operator/shard.ts';
import { shardGate } from '../controllers/operator/shard-gate.ts';
import { registerShardMetrics } from '../controllers/operator/shard-metrics.ts';
import { registerEventLoopMetrics } from '../controllers/operator/event-loop-metrics.ts';
import { createRouteGcMetrics } from '../controllers/routegc/routegc-metrics.ts';
import { createFlightMetrics } from '../controllers/flight/flight-metrics.ts';
import { createDeorbitMetrics } from '../controllers/deorbit/deorbit-metrics.ts';
import { DEFAULT_FLIGHT_SETTINGS } from '../controllers/flight/flight-reconciler.ts';
import { buildModeCommand } from './mode-command.ts';

export { parseControllers } from '../controllers/operator/operator-config.ts';

export function operatorCommand() {
  return buildModeCommand({
    ...operatorDeclaration,
    // The controllers and the management cluster's kubeconfig with the files it names; nothing is dialled.
    checkFiles: async (cfg) => {
      parseControllers(cfg.controllers);
      const source = kubeConfigSource(cfg);
      await checkKubeConfigFiles(loadKubeConfig(source), source.kind === 'file' ? `--kubeconfig ${source.path}` : 'in-cluster config');
    },
    run: async (cfg, ctx) => {
      const running = parseControllers(cfg.controllers);
      const source = kubeConfigSource(cfg);
      const clock = systemClock;
      // The management cluster is asked all the time: keep its connections (no handshake per request).
      const api = createKubeApi(loadKubeConfig(source), { keepAlive: true });
      // Credential Secrets' resourceVersions from a metadata-only cache: clients are rebuilt only when they change.
      // Namespaced install: Secrets are listed per watched namespace, the only place its Roles let it read them.
      const namespaces = cfg.namespace === undefined ? undefined : parseNamespaces(cfg.namespace);
      const secretVersions = new SecretVersions({ secrets: api.secrets, namespace: namespaces, clock, log: ctx.log });
      // Every cluster's OpenStack client shares one transport (a pool per cloud endpoint) and one table of catalog strings.
      const openstack = createOpenStackShared();
      const identity = cfg.identity ?? process.env.POD_NAME ?? `${hostname()}_${randomBytes(4).toString('hex')}`;
      // Sharding: one Deployment per shard, each electing its leader on its own Lease (shard.ts).
      const shard = cfg.shard;
      const log = shard ? ctx.log.child({ shard: formatShard(shard) }) : ctx.log;
      const gate = shard ? shardGate(shard, log) : undefined;
      const { informerNamespace, inScope } = namespaceScope(namespaces);
      // Every changing call of a cluster's clients checks the lease by this replica's clock just before it goes.
      const fence = new LeaseCallFence({ registry: ctx.registry, log });
      const op = new Operator({
        ownsCluster: gate || inScope ? (mc) => (inScope?.(mc.metadata.namespace) ?? true) && (gate?.owns(mc.metadata) ?? true) : undefined,
        api,
        namespace: informerNamespace,
        controllers: running,
        leaderElection: cfg.leaderElect
          ? {
              namespace: cfg.leaseNamespace ?? process.env.POD_NAMESPACE ?? 'kubeward-system',
              name: shard ? shardLeaseName(cfg.leaseName, shard) : cfg.leaseName,
              identity,
              leaseDurationMs: cfg.leaseDuration,
              renewDeadlineMs: cfg.renewDeadline,
              retryPeriodMs: cfg.retryPeriod,
            }
          : undefined,
        connector: secretConnector({
          secrets: api.secrets,
          cloudFactory: openStackCloudFactory(log, clock, openstack, fence),
          versions: secretVersions,
          fence,
        }),
        clients: secretClusterClients({ secrets: api.secrets, log, clock, kubeTimeoutMs: 30_000, versions: secretVersions, openstack, fence }),
        callFence: fence,
        caches: [secretVersions],
        routegc: running.includes('routegc')
          ? {
              metrics: createRouteGcMetrics(ctx.registry),
              intervalMs: cfg.routegcInterval,
              confirmAfterMs: cfg.routegcConfirmAfter,
              dryRun: cfg.routegcDryRun,
              routeLimit: cfg.routeLimit,
              routeLimitHeadroom: cfg.routeLimitHeadroom,
              maxRemovalsPerCycle: cfg.routegcMaxRemovalsPerCycle,
            }
          : undefined,
        flight: running.includes('flight')
          ? {
              metrics: createFlightMetrics(ctx.registry),
              intervalMs: cfg.flightInterval,
              settings: {
                ...DEFAULT_FLIGHT_SETTINGS,
                dryRun: cfg.flightDryRun,
                repairMissingRoutes: cfg.flightRepairMissingRoutes,
                forceSecurityGroupResync: cfg.flightForceSecurityGroupResync,
                maxDeletionsPerRound: cfg.flightMaxDeletionsPerRound,
                maxRebootsPerRound: cfg.flightMaxRebootsPerRound,
                maxMetadataWritesPerRound: cfg.flightMaxMetadataWritesPerRound,
                maxRuleChangesPerRound: cfg.flightMaxRuleChangesPerRound,
                softRebootAfterMs: cfg.flightSoftRebootAfter,
                hardRebootAfterMs: cfg.flightHardRebootAfter,
                deleteAfterMs: cfg.flightDeleteAfter,
                rebootBeforeDelete: cfg.flightRebootBeforeDelete,
                routeLimit: cfg.routeLimit,
              },
            }
          : undefined,
        deorbit: {
          pollIntervalMs: cfg.deorbitPollInterval,
          attemptTimeoutMs: cfg.deorbitAttemptTimeout,
          hangTimeoutMs: cfg.deorbitHangTimeout,
          apiUnavailableTimeoutMs: cfg.deorbitApiUnavailableTimeout,
          legacyServiceGraceMs: cfg.deorbitLegacyServiceGrace,
          csiDrivers: cfg.deorbitCsiDriver,
          maxDeletesPerPass: cfg.deorbitMaxDeletesPerPass,
          dryRun: cfg.deorbitDryRun,
          metrics: running.includes('deorbit') ? createDeorbitMetrics(ctx.registry) : undefined,
        },
        clock,
        log,
        metrics: createControllerMetrics(ctx.registry),
        workers: cfg.workers,
        resyncMs: cfg.resync,
      });
      const shardStatus = () => {
        if (!shard || !gate) return undefined;
        const cached = op.cachedClusters();
        gate.prune(new Set(cached.map((mc) => `${mc.metadata.namespace ?? ''}/${mc.metadata.name}`)));
        return summarizeShard(
          shard,
          cached.map((mc) => mc.metadata),
          gate.hash,
        );
      };
      if (shard) registerShardMetrics(ctx.registry, () => shardStatus()!);
      // 1 on the replica that holds the lease (or runs without election), 0 on standbys: alerts
      // count leaders across replicas (none, or more than one, is a page).
      new Gauge({
        name: 'kubeward_leader',
        help: 'Whether this operator replica leads (1) or stands by (0).',
        registers: [ctx.registry],
        collect() {
          this.set(op.isLeader ? 1 : 0);
        },
      });
      // A controller's timers and cycles share one loop: its delay is the operator's to show (not the node modes').
      const eventLoop = registerEventLoopMetrics(ctx.registry);
      op.start();
      ctx.shutdown.add('operator', () => op.close());
      ctx.shutdown.add('event-loop metrics', () => eventLoop.stop());
      return {
        readiness: () => op.readiness(),
        status: () => ({ identity, ...(op.status() as object), ...(shard ? { shard: shardStatus() } : {}) }),
        finished: op.lostLeadership,
      };
    },
  });
}

function kubeConfigSource(cfg: { kubeconfig?: string; context?: string }): KubeConfigSource {
  return cfg.kubeconfig ? { kind: 'file', path: cfg.kubeconfig, context: cfg.context } : inClusterSource();
}

function inClusterSource(): KubeConfigSource {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new UsageError("--kubeconfig: not running inside a cluster; give the management cluster's kubeconfig");
  return { kind: 'in-cluster', host, port };
}
