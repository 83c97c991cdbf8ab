// kubeward routegc: the composition root of single-cluster route garbage collection. Removes the
// cluster's orphaned and losing-duplicate routes from its Neutron router, every interval or once.
import { homedir } from 'node:os';
// zod/mini, as the daemons: the build leaves classic zod out (src/config/fields.ts says why).
import * as z from 'zod/mini';
import { systemClock } from '../base/clock.ts';
import { boolean, duration, integer } from '../config/fields.ts';
import { createKubeApi } from '../clients/kube/kube-api.ts';
import { loadKubeConfig } from '../clients/kube/load-kube-config.ts';
import { openStackClientFor } from '../clients/openstack/create-openstack-client.ts';
import { parseCidr } from '../base/ip.ts';
import { clusterCidrProblem } from '../controllers/managed-cluster/cidr-scope.ts';
import { kubeClusterNodes } from '../controllers/managed-cluster/cluster-adapters.ts';
import { poolNameProblem, poolPrefix } from '../controllers/managed-cluster/cluster-identity.ts';
import { DEFAULT_MAX_REMOVALS_PER_CYCLE, MIN_CONFIRM_AFTER_MS } from '../controllers/routegc/decide-routegc.ts';
import { openStackRouteGcCloud } from '../controllers/routegc/routegc-cloud.ts';
import { eventEmitter } from '../controllers/managed-cluster/cluster-events.ts';
import { runPeriodically } from '../controllers/managed-cluster/periodic-loop.ts';
import { RouteGcRunner, type RouteGcCycleResult } from '../controllers/routegc/routegc-cycle.ts';
import { createRouteGcMetrics } from '../controllers/routegc/routegc-metrics.ts';
import { RouteWriter } from '../controllers/managed-cluster/route-writer.ts';
import { buildModeCommand } from './mode-command.ts';

const cidr = z.string({ error: 'give the cluster\'s pod CIDR, such as 100.100.0.0/16' }).check(z.refine((s: string) => parseCidr(s) !== undefined, { error: (i) => `"${String(i.input)}" is not a CIDR such as 100.100.0.0/16` }));

const fields = {
  kubeconfig: z.string({ error: "give the path of the cluster's kubeconfig" }).check(z.minLength(1, "give the path of the cluster's kubeconfig")),
  context: z.optional(z.string().check(z.minLength(1))),
  osCloud: z.optional(z.string().check(z.minLength(1))),
  router: z.string({ error: 'give the ID of the cluster\'s Neutron router' }).check(z.minLength(1, 'give the ID of the cluster\'s Neutron router')),
  clusterCidr: cidr,
  clusterUid: z.optional(z.string().check(z.regex(/^[A-Za-z0-9-]{1,36}$/, 'expected the ManagedCluster\'s metadata.uid (letters, digits, "-")'))),
  allowWideClusterCidr: z.prefault(boolean, false),
  clusterName: z._default(z.string().check(z.minLength(1)), 'cluster'),
  pool: z._default(z.array(z.string().check(z.minLength(1))), []),
  instancePrefix: z._default(z.array(z.string().check(z.minLength(2), z.refine((p: string) => p.endsWith('-'), { error: (i) => `instance prefix "${String(i.input)}" must end with the "-" before the 5-character suffix, such as kks-k1-small-` }))), []),
  interval: z.prefault(duration({ min: 1000 }), '5m'),
  once: z.prefault(boolean, false),
  confirmAfter: z.prefault(duration({ min: MIN_CONFIRM_AFTER_MS }), '30s'),
  maxRemovalsPerCycle: z.prefault(integer(0, 1000), DEFAULT_MAX_REMOVALS_PER_CYCLE),
  dryRun: z.prefault(boolean, false),
  cleanup: z.prefault(boolean, false),
  cleanupTimeout: z.prefault(duration({ min: 1000 }), '5m'),
  routeLimit: z.prefault(integer(1, 100_000), 30),
  routeLimitHeadroom: z.prefault(integer(0, 1000), 3),
  writeMode: z._default(z.enum(['auto', 'atomic', 'revision', 'plain'], { error: 'expected auto, atomic, revision or plain' }), 'auto'),
};

export function routegcCommand() {
  return buildModeCommand({
    name: 'routegc',
    summary: "remove a cluster's orphaned and duplicate routes from its Neutron router",
    helpAfter: `A route is the cluster's only when its whole destination lies inside --cluster-cidr. One of those is
removed when its next hop is no address of the cluster's instances or Nodes (orphaned), or when it
loses a duplicate destination to the route reaching the Node that owns that pod CIDR - and only after
two cycles at least --confirm-after apart found it so, at most --max-removals-per-cycle per cycle.
Nothing is removed while the view is in doubt: an empty Node list without --pool/--instance-prefix,
an empty or suddenly shrunk Node or instance list, a Nova server listed as UNKNOWN (a down cell),
or Node pod CIDRs outside --cluster-cidr. --cluster-cidr must be /8 or narrower (IPv6 /32) unless
--allow-wide-cluster-cidr; /0 is never accepted. Removal uses remove_extraroutes (extraroute-atomic),
else a full-list update guarded by If-Match revision_number (revision-if-match), else a full-list
update read back and repaired.

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
      { key: 'clusterUid', value: '<uid>', help: "the ManagedCluster's metadata.uid, to prove and write ownership as the operator does", defaultText: 'name:<cluster-name>' },
      { key: 'allowWideClusterCidr', help: 'accept a --cluster-cidr wider than /8 (IPv6 /32); /0 is refused anyway' },
      { key: 'clusterName', value: '<name>', help: 'the cluster (kks-<name>-<pool>-xxxxx instances), in metrics and events', defaultText: 'cluster' },
      { key: 'pool', value: '<name>', help: 'node pool: instances kks-<cluster>-<pool>-xxxxx are the cluster\'s (letters and digits only)', repeatable: true },
      { key: 'instancePrefix', value: '<prefix>', help: "pool prefix ending in '-': an instance named <prefix> + 5 letters/digits is the cluster's (e.g. kks-k1-small-)", repeatable: true },
      { key: 'interval', value: '<duration>', help: 'time between cycles (plus 0-50 % jitter)', defaultText: '5m' },
      { key: 'once', help: 'look twice, act, and exit' },
      { key: 'confirmAfter', value: '<duration>', help: 'least time between the two sightings of a removal (at least 10s)', defaultText: '30s' },
      { key: 'maxRemovalsPerCycle', value: '<n>', help: 'route removals per cycle; the rest wait', defaultText: String(DEFAULT_MAX_REMOVALS_PER_CYCLE) },
      { key: 'dryRun', help: 'log and record what would be removed; change nothing' },
      { key: 'cleanup', help: 'termination: remove every route in the cluster CIDR, wait until gone, exit' },
      { key: 'cleanupTimeout', value: '<duration>', help: 'with --cleanup: give up after this long', defaultText: '5m' },
      { key: 'routeLimit', value: '<n>', help: "Neutron's max_routes for the router", defaultText: '30' },
      { key: 'routeLimitHeadroom', value: '<n>', help: 'warn when fewer free route slots than this remain', defaultText: '3' },
      { key: 'writeMode', value: '<auto|atomic|revision|plain>', help: 'auto picks extraroute-atomic, else revision-if-match, else plain, from Neutron\'s extensions', defaultText: 'auto' },
    ],
    fields,
    adminPort: 9454,
    check: (c) => {
      if (c.once && c.cleanup) return '--once and --cleanup exclude each other: pick one';
      const cidr = clusterCidrProblem(c.clusterCidr, { allowWide: c.allowWideClusterCidr });
      if (cidr) return `--cluster-cidr: ${cidr}`;
      const pool = c.pool.map(poolNameProblem).find((p) => p !== undefined);
      return pool ? `--pool: ${pool}` : undefined;
    },
    run: async (cfg, ctx) => {
      const clock = systemClock;
      const api = createKubeApi(loadKubeConfig({ kind: 'file', path: cfg.kubeconfig, context: cfg.context }), { timeoutMs: 30_000 });
      const os = await openStackClientFor(cfg.osCloud, { env: process.env, cwd: process.cwd(), homeDir: homedir() }, { log: ctx.log, clock });
      const gc = new RouteGcRunner(
        { cloud: openStackRouteGcCloud(os), writer: new RouteWriter(os.neutron, { mode: cfg.writeMode }), nodes: kubeClusterNodes(api), emit: eventEmitter(ctx.log, {}), metrics: createRouteGcMetrics(ctx.registry), log: ctx.log, clock },
        {
          cluster: cfg.clusterName, routerId: cfg.router, clusterCidr: cfg.clusterCidr, allowWide: cfg.allowWideClusterCidr,
          identity: { ownerId: cfg.clusterUid ?? `name:${cfg.clusterName}`, poolPrefixes: [...cfg.pool.map((p) => poolPrefix(cfg.clusterName, p)), ...cfg.instancePrefix] },
          routeLimit: cfg.routeLimit, routeLimitHeadroom: cfg.routeLimitHeadroom, confirmAfterMs: cfg.confirmAfter, maxRemovalsPerCycle: cfg.maxRemovalsPerCycle, dryRun: cfg.dryRun,
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
  if (r.skipped) return `${label}: refused (${r.decision?.refusalCode ?? 'error'}): ${r.skipped}`;
  const d = r.decision!;
  const verb = dryRun ? 'would remove' : 'removed';
  const list = (fs: typeof r.removed) => fs.map((f) => `${f.route.destination} via ${f.route.nexthop} (${f.reason})`).join(', ') || 'none';
  return `${label}: ${d.counts.seen} routes, ${d.counts.ours} of the cluster; ${verb}: ${list(r.removed)}; suspect: ${list(d.pending)}; held back by the budget: ${list(d.heldBack)}; route limit ${d.routeLimit.count}/${d.routeLimit.limit}${d.routeLimit.approaching ? ' (approaching)' : ''}`;
}

