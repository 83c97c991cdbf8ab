// kubeward routegc: the composition root of single-cluster route garbage collection. Removes the
// cluster's orphaned and losing-duplicate routes from its Neutron router, every interval or once.
// Settings: src/controllers/routegc/routegc-config.ts; output lines: routegc-report.ts beside it.
import { homedir } from 'node:os';
import { systemClock } from '../base/clock.ts';
import { UsageError } from '../base/errors.ts';
import { createKubeApi } from '../clients/kube/kube-api.ts';
import { loadKubeConfig } from '../clients/kube/load-kube-config.ts';
import { openStackClientFor } from '../clients/openstack/create-openstack-client.ts';
import { kubeClusterNodes } from '../controllers/managed-cluster/cluster-adapters.ts';
import { poolPrefix } from '../controllers/managed-cluster/cluster-identity.ts';
import { openStackRouteGcCloud } from '../controllers/routegc/routegc-cloud.ts';
import { eventEmitter } from '../controllers/managed-cluster/cluster-events.ts';
import { runPeriodically } from '../controllers/managed-cluster/periodic-loop.ts';
import { RouteGcRunner, type RouteGcCycleResult } from '../controllers/routegc/routegc-cycle.ts';
import { routegcDeclaration } from '../controllers/routegc/routegc-config.ts';
import { statusOf, summary } from '../controllers/routegc/routegc-report.ts';
import { createRouteGcMetrics } from '../controllers/routegc/routegc-metrics.ts';
import { RouteWriter } from '../controllers/managed-cluster/route-writer.ts';
import { buildModeCommand } from './mode-command.ts';
import { kubeSystemUid } from './cluster-owner-id.ts';

export function routegcCommand() {
  return buildModeCommand({
    ...routegcDeclaration,
    run: async (cfg, ctx) => {
      const clock = systemClock;
      const api = createKubeApi(loadKubeConfig({ kind: 'file', path: cfg.kubeconfig, context: cfg.context }), { timeoutMs: 30_000 });
      const os = await openStackClientFor(cfg.osCloud, { env: process.env, cwd: process.cwd(), homeDir: homedir() }, { log: ctx.log, clock });
      const gc = new RouteGcRunner(
        {
          cloud: openStackRouteGcCloud(os),
          writer: new RouteWriter(os.neutron, { mode: cfg.writeMode }),
          nodes: kubeClusterNodes(api),
          emit: eventEmitter(ctx.log, {}),
          metrics: createRouteGcMetrics(ctx.registry),
          log: ctx.log,
          clock,
        },
        {
          cluster: cfg.clusterName,
          routerId: cfg.router,
          clusterCidr: cfg.clusterCidr,
          allowWide: cfg.allowWideClusterCidr,
          forceClusterCidr: cfg.forceClusterCidr,
          identity: {
            // Unique per cluster without being told (cluster-owner-id.ts); never the name alone.
            ownerId: cfg.clusterUid ?? (await kubeSystemUid(api)),
            poolPrefixes: [...cfg.pool.map((p) => poolPrefix(cfg.clusterName, p)), ...cfg.instancePrefix],
          },
          routeLimit: cfg.routeLimit,
          routeLimitHeadroom: cfg.routeLimitHeadroom,
          confirmAfterMs: cfg.confirmAfter,
          maxRemovalsPerCycle: cfg.maxRemovalsPerCycle,
          dryRun: cfg.dryRun,
        },
      );
      const abort = new AbortController();
      ctx.shutdown.add('routegc loop', () => abort.abort(new Error('interrupted')));
      const print = (line: string): void => void process.stdout.write(line + '\n');
      if (cfg.cleanup) {
        const left = await gc.removeAll(clock, { timeoutMs: cfg.cleanupTimeout, pollMs: 2000, signal: abort.signal });
        print(left.length ? `routes left: ${left.map((r) => `${r.destination} via ${r.nexthop}`).join(', ')}` : 'no route of the cluster is left');
        return left.length ? 1 : 0;
      }
      if (cfg.once) {
        const first = await gc.cycle(abort.signal);
        print(summary('look 1', first, cfg.dryRun));
        badScope(first);
        if (first.skipped) return 1;
        if (first.decision?.pending.length) await clock.sleep(cfg.confirmAfter, abort.signal);
        const second = first.decision?.pending.length ? await gc.cycle(abort.signal) : first;
        if (second !== first) print(summary('look 2', second, cfg.dryRun));
        return second.skipped ? 1 : 0;
      }
      let ready = false;
      let stopBad: (err: Error) => void = () => undefined;
      const bad = new Promise<number>((_, reject) => (stopBad = reject));
      const finished = runPeriodically(
        async (signal) => {
          const result = await gc.cycle(signal);
          try {
            badScope(result);
          } catch (err) {
            abort.abort(err);
            stopBad(err as Error);
          }
          ready = true;
        },
        { name: 'routegc', intervalMs: cfg.interval, clock, log: ctx.log, signal: abort.signal },
      ).then(() => 0);
      return {
        readiness: () => (ready ? { ready: true, reason: 'cycling' } : { ready: false, reason: 'first cycle not finished' }),
        status: () => ({ cluster: cfg.clusterName, router: cfg.router, dryRun: cfg.dryRun, memory: gc.memory, last: gc.last && statusOf(gc.last) }),
        // The loop ends only on shutdown, which ends the mode by itself.
        finished: Promise.race([bad, finished.then(() => new Promise<number>(() => {}))]),
      };
    },
  });
}

/**
 * A cluster CIDR far wider than the Nodes' pod CIDRs is bad usage, though only the Nodes tell: exit 2
 * naming the flag and the fix, whenever a cycle finds it.
 */
function badScope(result: RouteGcCycleResult): void {
  if (result.decision?.refusalCode !== 'ClusterCIDRTooWide') return;
  throw new UsageError(`--cluster-cidr: ${result.decision.refusal} (--force-cluster-cidr accepts it)`);
}
