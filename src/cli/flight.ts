// kubeward flight: the composition root of single-cluster OpenStack self-repair. Each round checks the
// cluster's security group, instances, service user roles, tags and routes, and repairs what it may.
// Settings: src/controllers/flight/flight-config.ts; output lines: flight-report.ts beside it.
import { homedir } from 'node:os';
import { systemClock } from '../base/clock.ts';
import { createKubeApi } from '../clients/kube/kube-api.ts';
import { loadKubeConfig } from '../clients/kube/load-kube-config.ts';
import { EventRecorder } from '../clients/kube/event-recorder.ts';
import { openStackClientFor } from '../clients/openstack/create-openstack-client.ts';
import { poolPrefix } from '../controllers/managed-cluster/cluster-identity.ts';
import { kubernikusClaim, parseAdoptOwners, parseOwnerMetadata } from '../controllers/managed-cluster/provisioner-claims.ts';
import { kubeClusterNodes } from '../controllers/managed-cluster/cluster-adapters.ts';
import { eventEmitter } from '../controllers/managed-cluster/cluster-events.ts';
import { runPeriodically } from '../controllers/managed-cluster/periodic-loop.ts';
import { RouteWriter } from '../controllers/managed-cluster/route-writer.ts';
import { openStackFlightCloud } from '../controllers/flight/flight-cloud.ts';
import { createFlightMetrics } from '../controllers/flight/flight-metrics.ts';
import { FlightRunner, type FlightRoundResult } from '../controllers/flight/flight-round.ts';
import { flightDeclaration } from '../controllers/flight/flight-config.ts';
import { roundStatus, summary } from '../controllers/flight/flight-report.ts';
import { buildModeCommand } from './mode-command.ts';
import { kubeSystemUid } from './cluster-owner-id.ts';

export function flightCommand() {
  return buildModeCommand({
    ...flightDeclaration,
    run: async (cfg, ctx) => {
      const clock = systemClock;
      const api = createKubeApi(loadKubeConfig({ kind: 'file', path: cfg.kubeconfig, context: cfg.context }), { timeoutMs: 30_000 });
      const where = { env: process.env, cwd: process.cwd(), homeDir: homedir() };
      const os = await openStackClientFor(cfg.osCloud, where, { log: ctx.log, clock });
      const admin = cfg.adminOsCloud ? await openStackClientFor(cfg.adminOsCloud, where, { log: ctx.log, clock }) : undefined;
      const nodeEvents = new EventRecorder({ events: api.events, component: 'kubeward-flight', clock, log: ctx.log });
      const nodes = kubeClusterNodes(api);
      // Unique per cluster without being told: the kube-system namespace's UID of the cluster the
      // kubeconfig reaches (the cluster name alone is shared by every cluster of that name).
      const ownerId = cfg.clusterUid ?? (await kubeSystemUid(api));
      const owned = parseOwnerMetadata(cfg.ownerMetadata, cfg.clusterName);
      const runner = new FlightRunner(
        {
          cloud: openStackFlightCloud(os, admin),
          nodes,
          routes: new RouteWriter(os.neutron),
          emit: eventEmitter(ctx.log, { nodes: nodeEvents }),
          metrics: createFlightMetrics(ctx.registry),
          log: ctx.log,
          clock,
        },
        {
          clusterName: cfg.clusterName,
          ownerId,
          provisionerClaims: [kubernikusClaim(cfg.clusterName), ...(owned.claim ? [owned.claim] : [])],
          adoptOwners: parseAdoptOwners(cfg.adoptOwner),
          clusterCidr: cfg.clusterCidr,
          securityGroupName: cfg.securityGroup,
          pools: cfg.pool.map((p) => ({ name: p, prefix: poolPrefix(cfg.clusterName, p) })),
          allowWide: cfg.allowWideClusterCidr,
          forceClusterCidr: cfg.forceClusterCidr,
          maxRebootsPerRound: cfg.maxRebootsPerRound,
          maxMetadataWritesPerRound: cfg.maxMetadataWritesPerRound,
          maxRuleChangesPerRound: cfg.maxRuleChangesPerRound,
          softRebootAfterMs: cfg.softRebootAfter,
          hardRebootAfterMs: cfg.hardRebootAfter,
          deleteAfterMs: cfg.deleteAfter,
          rebootBeforeDelete: cfg.rebootBeforeDelete,
          maxDeletionsPerRound: cfg.maxDeletionsPerRound,
          wantedRoles: cfg.role,
          forceSecurityGroupResync: cfg.forceSecurityGroupResync,
          repairMissingRoutes: cfg.repairMissingRoutes,
          routeLimit: cfg.routeLimit,
          routerId: cfg.router,
          checkRoles: cfg.checkRoles,
          dryRun: cfg.dryRun,
        },
      );
      const abort = new AbortController();
      ctx.shutdown.add('flight loop', () => abort.abort(new Error('interrupted')));
      if (cfg.once) {
        const r = await runner.round(abort.signal);
        process.stdout.write(summary(r, cfg.dryRun) + '\n');
        return r.failed.length || r.plan.refusal ? 1 : 0;
      }
      let last: FlightRoundResult | undefined;
      const loop = runPeriodically(
        async (signal) => {
          last = await runner.round(signal);
        },
        { name: 'flight', intervalMs: cfg.interval, clock, log: ctx.log, signal: abort.signal },
      );
      return {
        readiness: () => (last ? { ready: true, reason: 'flying' } : { ready: false, reason: 'first round not finished' }),
        status: () => ({ cluster: cfg.clusterName, dryRun: cfg.dryRun, memory: runner.memory, last: last && roundStatus(last) }),
        // The loop ends only on shutdown, which ends the mode by itself.
        finished: loop.then(() => new Promise<number>(() => {})),
      };
    },
  });
}
