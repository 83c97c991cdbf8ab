// kubeward flight: the composition root of single-cluster OpenStack self-repair. Each round checks the
// cluster's security group, instances, service user roles, tags and routes, and repairs what it may.
import { homedir } from 'node:os';
import { z } from 'zod';
import { systemClock } from '../base/clock.ts';
import { boolean, duration, integer } from '../config/fields.ts';
import { createKubeApi } from '../clients/kube/kube-api.ts';
import { loadKubeConfig } from '../clients/kube/load-kube-config.ts';
import { EventRecorder } from '../clients/kube/event-recorder.ts';
import { openStackClientFor } from '../clients/openstack/create-openstack-client.ts';
import { parseCidr } from '../controllers/routegc/cidr.ts';
import { kubeClusterNodes } from '../controllers/routegc/cluster-adapters.ts';
import { eventEmitter } from '../controllers/routegc/cluster-events.ts';
import { runPeriodically } from '../controllers/routegc/periodic-loop.ts';
import { RouteWriter } from '../controllers/routegc/route-writer.ts';
import { openStackFlightCloud } from '../controllers/flight/flight-cloud.ts';
import { createFlightMetrics } from '../controllers/flight/flight-metrics.ts';
import { FlightRunner, type FlightRoundResult } from '../controllers/flight/flight-round.ts';
import { describeAction } from '../controllers/flight/flight-action-text.ts';
import { buildModeCommand } from './mode-command.ts';

const cidr = z.string({ error: 'give the cluster\'s pod CIDR, such as 100.100.0.0/16' }).refine((s) => parseCidr(s) !== undefined, { error: (i) => `"${String(i.input)}" is not a CIDR such as 100.100.0.0/16` });

const fields = {
  kubeconfig: z.string({ error: "give the path of the cluster's kubeconfig" }).min(1, "give the path of the cluster's kubeconfig"),
  context: z.string().min(1).optional(),
  osCloud: z.string().min(1).optional(),
  adminOsCloud: z.string().min(1).optional(),
  clusterName: z.string({ error: 'give the cluster\'s name (kks-<name>-<pool>-xxxxx instances)' }).min(1, 'give the cluster\'s name (kks-<name>-<pool>-xxxxx instances)'),
  clusterCidr: cidr,
  securityGroup: z.string({ error: 'give the name of the cluster\'s security group' }).min(1, 'give the name of the cluster\'s security group'),
  pool: z.array(z.string().min(1)).default([]),
  router: z.string().min(1).optional(),
  interval: duration({ min: 1000 }).prefault('5m'),
  once: boolean.prefault(false),
  dryRun: boolean.prefault(false),
  softRebootAfter: duration().prefault('10m'),
  hardRebootAfter: duration().prefault('5m'),
  deleteAfter: duration().prefault('15m'),
  rebootBeforeDelete: boolean.prefault(true),
  maxDeletionsPerRound: integer(0, 1000).prefault(1),
  role: z.array(z.string().min(1)).default(['member', 'network_admin']),
  checkRoles: boolean.prefault(true),
  forceSecurityGroupResync: boolean.prefault(false),
  repairMissingRoutes: boolean.prefault(false),
  routeLimit: integer(1, 100_000).prefault(30),
};

export function flightCommand() {
  return buildModeCommand({
    name: 'flight',
    summary: "repair a cluster's known OpenStack failure modes (security group, stuck and errored instances, roles, tags, routes)",
    helpAfter: `Each round, independently: ingress udp/tcp/icmp rules from --cluster-cidr in --security-group; the group on
every running instance; instances that never became Nodes (soft reboot after --soft-reboot-after,
hard reboot --hard-reboot-after later, deletion --delete-after after that, at most
--max-deletions-per-round, never while the Nodes cannot be read, never for an instance whose Node
existed); errored instances deleted; the service user's roles (assigned with --admin-os-cloud);
tags and metadata on instances; with --router, Node conditions kubeward.io/RouteMissing and
kubeward.io/RouteConflict, and with --repair-missing-routes the missing routes added.
Instances are the cluster's when a Node names them (providerID, then name) or their name starts
with kks-<cluster>-<pool>- for a --pool.

--once runs one round and exits: 0 all repairs done, 1 some failed, 2 bad usage.

Example:
  kubeward flight --kubeconfig k1.kubeconfig --os-cloud k1 --cluster-name k1 --cluster-cidr 100.100.0.0/16 \\
    --security-group k1-sg --pool small --router 5d1c... --once --dry-run`,
    flags: [
      { key: 'kubeconfig', value: '<file>', help: 'kubeconfig of the cluster (Nodes are read, conditions and events written) (required)' },
      { key: 'context', value: '<name>', help: 'kubeconfig context (default: its current-context)' },
      { key: 'osCloud', value: '<name>', help: "the cluster's cloud entry in clouds.yaml (its service user)" },
      { key: 'adminOsCloud', value: '<name>', help: 'cloud entry with rights to assign roles (without it, a missing role is a failed repair naming this flag)' },
      { key: 'clusterName', value: '<name>', help: "the cluster's name (required)" },
      { key: 'clusterCidr', value: '<cidr>', help: "the cluster's pod CIDR (required)" },
      { key: 'securityGroup', value: '<name>', help: "the cluster's security group (required)" },
      { key: 'pool', value: '<name>', help: 'node pool (instances kks-<cluster>-<pool>-xxxxx)', repeatable: true },
      { key: 'router', value: '<id>', help: "the cluster's router, for the route checks" },
      { key: 'interval', value: '<duration>', help: 'time between rounds (plus 0-50 % jitter)', defaultText: '5m' },
      { key: 'once', help: 'one round, then exit' },
      { key: 'dryRun', help: 'log and record the repairs; change nothing' },
      { key: 'softRebootAfter', value: '<duration>', help: 'an unregistered instance this old is soft-rebooted', defaultText: '10m' },
      { key: 'hardRebootAfter', value: '<duration>', help: 'then hard-rebooted this long after', defaultText: '5m' },
      { key: 'deleteAfter', value: '<duration>', help: 'then deleted this long after', defaultText: '15m' },
      { key: 'rebootBeforeDelete', help: 'reboot before deleting', defaultText: 'on', negatable: true },
      { key: 'maxDeletionsPerRound', value: '<n>', help: 'instance deletions per round', defaultText: '1' },
      { key: 'role', value: '<name>', help: 'role the service user needs on the project', defaultText: 'member, network_admin', repeatable: true },
      { key: 'checkRoles', help: "check the service user's roles", defaultText: 'on', negatable: true },
      { key: 'forceSecurityGroupResync', help: 'touch the group when a Node reports broken pod traffic (NetworkUnavailable or kubeward.io/pod-network-broken)' },
      { key: 'repairMissingRoutes', help: 'add the route of a Node whose pod CIDR has none (within the route limit)' },
      { key: 'routeLimit', value: '<n>', help: "Neutron's max_routes for the router", defaultText: '30' },
    ],
    fields,
    adminPort: 9456,
    run: async (cfg, ctx) => {
      const clock = systemClock;
      const api = createKubeApi(loadKubeConfig({ kind: 'file', path: cfg.kubeconfig, context: cfg.context }), { timeoutMs: 30_000 });
      const where = { env: process.env, cwd: process.cwd(), homeDir: homedir() };
      const os = await openStackClientFor(cfg.osCloud, where, { log: ctx.log, clock });
      const admin = cfg.adminOsCloud ? await openStackClientFor(cfg.adminOsCloud, where, { log: ctx.log, clock }) : undefined;
      const nodeEvents = new EventRecorder({ events: api.events, component: 'kubeward-flight', clock, log: ctx.log });
      const nodes = kubeClusterNodes(api);
      const runner = new FlightRunner(
        { cloud: openStackFlightCloud(os, admin), nodes, routes: new RouteWriter(os.neutron), emit: eventEmitter(ctx.log, { nodes: nodeEvents }), metrics: createFlightMetrics(ctx.registry), log: ctx.log, clock },
        {
          clusterName: cfg.clusterName, clusterCidr: cfg.clusterCidr, securityGroupName: cfg.securityGroup,
          pools: cfg.pool.map((p) => ({ name: p, prefix: `kks-${cfg.clusterName}-${p}-` })),
          softRebootAfterMs: cfg.softRebootAfter, hardRebootAfterMs: cfg.hardRebootAfter, deleteAfterMs: cfg.deleteAfter,
          rebootBeforeDelete: cfg.rebootBeforeDelete, maxDeletionsPerRound: cfg.maxDeletionsPerRound, wantedRoles: cfg.role,
          forceSecurityGroupResync: cfg.forceSecurityGroupResync, repairMissingRoutes: cfg.repairMissingRoutes, routeLimit: cfg.routeLimit,
          routerId: cfg.router, checkRoles: cfg.checkRoles, dryRun: cfg.dryRun,
        },
      );
      const abort = new AbortController();
      ctx.shutdown.add('flight loop', () => abort.abort(new Error('interrupted')));
      if (cfg.once) {
        const r = await runner.round(abort.signal);
        process.stdout.write(summary(r, cfg.dryRun) + '\n');
        return r.failed.length ? 1 : 0;
      }
      let last: FlightRoundResult | undefined;
      const loop = runPeriodically(async (signal) => {
        last = await runner.round(signal);
      }, { name: 'flight', intervalMs: cfg.interval, clock, log: ctx.log, signal: abort.signal });
      return {
        readiness: () => (last ? { ready: true, reason: 'flying' } : { ready: false, reason: 'first round not finished' }),
        status: () => ({ cluster: cfg.clusterName, dryRun: cfg.dryRun, memory: runner.memory, last: last && { done: last.done.map(describeAction), failed: last.failed.map((f) => `${describeAction(f.action)}: ${f.error}`), findings: last.plan.findings } }),
        // The loop ends only on shutdown, which ends the mode by itself.
        finished: loop.then(() => new Promise<number>(() => {})),
      };
    },
  });
}

function summary(r: FlightRoundResult, dryRun: boolean): string {
  const lines = [
    ...(dryRun ? r.plan.actions.map((a) => `would ${describeAction(a)}`) : r.done.map((a) => `done: ${describeAction(a)}`)),
    ...r.failed.map((f) => `failed: ${describeAction(f.action)}: ${f.error}`),
    ...r.plan.findings.map((f) => `found: ${f.reason}: ${f.message}`),
    ...r.plan.conditions.filter((c) => c.status === 'True').map((c) => `node ${c.node}: ${c.type} ${c.reason}: ${c.message}`),
  ];
  return lines.length ? lines.join('\n') : 'nothing to repair';
}
