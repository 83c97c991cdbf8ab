// kubeward routegc: the composition root of single-cluster route garbage collection. Removes the
// cluster's orphaned and losing-duplicate routes from its Neutron router, every interval or once.
import { homedir } from 'node:os';
import { z } from 'zod';
import { systemClock } from '../base/clock.ts';
import { boolean, duration, integer } from '../config/fields.ts';
import { createKubeApi } from '../clients/kube/kube-api.ts';
import { loadKubeConfig } from '../clients/kube/load-kube-config.ts';
import { openStackClientFor } from '../clients/openstack/create-openstack-client.ts';
import { parseCidr } from '../controllers/routegc/cidr.ts';
import { kubeClusterNodes, openStackRouteGcCloud } from '../controllers/routegc/cluster-adapters.ts';
import { eventEmitter } from '../controllers/routegc/cluster-events.ts';
import { runPeriodically } from '../controllers/routegc/periodic-loop.ts';
import { RouteGcRunner, type RouteGcCycleResult } from '../controllers/routegc/routegc-cycle.ts';
import { createRouteGcMetrics } from '../controllers/routegc/routegc-metrics.ts';
import { RouteWriter } from '../controllers/routegc/route-writer.ts';
import { buildModeCommand } from './mode-command.ts';

const cidr = z.string({ error: 'give the cluster\'s pod CIDR, such as 100.100.0.0/16' }).refine((s) => parseCidr(s) !== undefined, { error: (i) => `"${String(i.input)}" is not a CIDR such as 100.100.0.0/16` });

const fields = {
  kubeconfig: z.string({ error: "give the path of the cluster's kubeconfig" }).min(1, "give the path of the cluster's kubeconfig"),
  context: z.string().min(1).optional(),
  osCloud: z.string().min(1).optional(),
  router: z.string({ error: 'give the ID of the cluster\'s Neutron router' }).min(1, 'give the ID of the cluster\'s Neutron router'),
  clusterCidr: cidr,
  clusterName: z.string().min(1).default('cluster'),
  instancePrefix: z.array(z.string().min(1)).default([]),
  interval: duration({ min: 1000 }).prefault('5m'),
  once: boolean.prefault(false),
  confirmAfter: duration({ min: 0 }).prefault('30s'),
  dryRun: boolean.prefault(false),
  cleanup: boolean.prefault(false),
  cleanupTimeout: duration({ min: 1000 }).prefault('5m'),
  routeLimit: integer(1, 100_000).prefault(30),
  routeLimitHeadroom: integer(0, 1000).prefault(3),
  writeMode: z.enum(['auto', 'atomic', 'revision'], { error: 'expected auto, atomic or revision' }).default('auto'),
};

export function routegcCommand() {
  return buildModeCommand({
    name: 'routegc',
    summary: "remove a cluster's orphaned and duplicate routes from its Neutron router",
    helpAfter: `A route is the cluster's only when its whole destination lies inside --cluster-cidr. One of those is
removed when its next hop is no address of the cluster's instances or Nodes (orphaned), or when it
loses a duplicate destination to the route reaching the Node that owns that pod CIDR - and only after
two consecutive cycles found it so. An empty or suddenly shrunk instance list while Nodes exist
stops the cycle. Removal uses remove_extraroutes (extraroute-atomic) or, without it, a full-list
update guarded by If-Match revision_number, so routes others add meanwhile are kept.

--once looks twice (--confirm-after apart), removes what both looks agree on and exits:
0 nothing left to remove, 1 refused or failed, 2 bad usage. --cleanup removes every route of the
cluster (termination) and waits until the router shows none.

Examples:
  kubeward routegc --kubeconfig k1.kubeconfig --os-cloud k1 --router 5d1c... --cluster-cidr 100.100.0.0/16
  kubeward routegc --kubeconfig k1.kubeconfig --os-cloud k1 --router 5d1c... --cluster-cidr 100.100.0.0/16 --once --dry-run`,
    flags: [
      { key: 'kubeconfig', value: '<file>', help: 'kubeconfig of the cluster (its Nodes are read) (required)' },
      { key: 'context', value: '<name>', help: 'kubeconfig context (default: its current-context)' },
      { key: 'osCloud', value: '<name>', help: 'cloud entry in clouds.yaml (default: $OS_CLOUD, or the OS_* variables alone)' },
      { key: 'router', value: '<id>', help: "the cluster's Neutron router (required)" },
      { key: 'clusterCidr', value: '<cidr>', help: "the cluster's pod CIDR, e.g. 100.100.0.0/16 (required)" },
      { key: 'clusterName', value: '<name>', help: 'name used in metrics and events', defaultText: 'cluster' },
      { key: 'instancePrefix', value: '<prefix>', help: "name prefix of the cluster's instances besides those its Nodes name (e.g. kks-k1-)", repeatable: true },
      { key: 'interval', value: '<duration>', help: 'time between cycles (plus 0-50 % jitter)', defaultText: '5m' },
      { key: 'once', help: 'look twice, act, and exit' },
      { key: 'confirmAfter', value: '<duration>', help: 'with --once: time between the two looks', defaultText: '30s' },
      { key: 'dryRun', help: 'log and record what would be removed; change nothing' },
      { key: 'cleanup', help: 'termination: remove every route in the cluster CIDR, wait until gone, exit' },
      { key: 'cleanupTimeout', value: '<duration>', help: 'with --cleanup: give up after this long', defaultText: '5m' },
      { key: 'routeLimit', value: '<n>', help: "Neutron's max_routes for the router", defaultText: '30' },
      { key: 'routeLimitHeadroom', value: '<n>', help: 'warn when fewer free route slots than this remain', defaultText: '3' },
      { key: 'writeMode', value: '<auto|atomic|revision>', help: 'auto uses extraroute-atomic when Neutron has it', defaultText: 'auto' },
    ],
    fields,
    adminPort: 9454,
    check: (c) => (c.once && c.cleanup ? '--once and --cleanup exclude each other: pick one' : undefined),
    run: async (cfg, ctx) => {
      const clock = systemClock;
      const api = createKubeApi(loadKubeConfig({ kind: 'file', path: cfg.kubeconfig, context: cfg.context }), { timeoutMs: 30_000 });
      const os = await openStackClientFor(cfg.osCloud, { env: process.env, cwd: process.cwd(), homeDir: homedir() }, { log: ctx.log, clock });
      const gc = new RouteGcRunner(
        { cloud: openStackRouteGcCloud(os), writer: new RouteWriter(os.neutron, { mode: cfg.writeMode }), nodes: kubeClusterNodes(api), emit: eventEmitter(ctx.log, {}), metrics: createRouteGcMetrics(ctx.registry), log: ctx.log },
        { cluster: cfg.clusterName, routerId: cfg.router, clusterCidr: cfg.clusterCidr, namePrefixes: cfg.instancePrefix, routeLimit: cfg.routeLimit, routeLimitHeadroom: cfg.routeLimitHeadroom, dryRun: cfg.dryRun },
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
        if (first.skipped) return 1;
        if (first.decision?.pending.length) await clock.sleep(cfg.confirmAfter, abort.signal);
        const second = first.decision?.pending.length ? await gc.cycle(abort.signal) : first;
        if (second !== first) print(summary('look 2', second, cfg.dryRun));
        return second.skipped ? 1 : 0;
      }
      let ready = false;
      const finished = runPeriodically(async (signal) => {
        await gc.cycle(signal);
        ready = true;
      }, { name: 'routegc', intervalMs: cfg.interval, clock, log: ctx.log, signal: abort.signal }).then(() => 0);
      return {
        readiness: () => (ready ? { ready: true, reason: 'cycling' } : { ready: false, reason: 'first cycle not finished' }),
        status: () => ({ cluster: cfg.clusterName, router: cfg.router, dryRun: cfg.dryRun, memory: gc.memory, last: gc.last && statusOf(gc.last) }),
        // The loop ends only on shutdown, which ends the mode by itself.
        finished: finished.then(() => new Promise<number>(() => {})),
      };
    },
  });
}

function statusOf(r: RouteGcCycleResult) {
  return { skipped: r.skipped, removed: r.removed.map((f) => ({ ...f.route, reason: f.reason })), pending: r.decision?.pending.map((f) => ({ ...f.route, reason: f.reason })), counts: r.decision?.counts, routeLimit: r.decision?.routeLimit, conflicts: r.conflicts };
}

function summary(label: string, r: RouteGcCycleResult, dryRun: boolean): string {
  if (r.skipped) return `${label}: refused: ${r.skipped}`;
  const d = r.decision!;
  const verb = dryRun ? 'would remove' : 'removed';
  const list = (fs: typeof r.removed) => fs.map((f) => `${f.route.destination} via ${f.route.nexthop} (${f.reason})`).join(', ') || 'none';
  return `${label}: ${d.counts.seen} routes, ${d.counts.ours} of the cluster; ${verb}: ${list(r.removed)}; suspect: ${list(d.pending)}; route limit ${d.routeLimit.count}/${d.routeLimit.limit}${d.routeLimit.approaching ? ' (approaching)' : ''}`;
}

