// kubeward routegc's settings: defaults, the zod fields (flags and file), the flags' help, and the
// checks across keys. The command (src/cli/routegc.ts), --help and docs/routegc.md come from here.
// zod/mini, as the daemons: the build leaves classic zod out (src/config/fields.ts says why).
import * as z from 'zod/mini';
import { boolean, duration, integer } from '../../config/fields.ts';
import type { ModeDeclaration } from '../../config/mode-declaration.ts';
import { clusterAccessFields, clusterCidrField } from '../managed-cluster/cluster-cli-fields.ts';
import { clusterCidrProblem } from '../managed-cluster/cidr-scope.ts';
import { poolNameProblem } from '../managed-cluster/cluster-identity.ts';
import { DEFAULT_MAX_REMOVALS_PER_CYCLE, DEFAULT_ROUTE_LIMIT, MIN_CONFIRM_AFTER_MS } from './decide-routegc.ts';

/** The defaults, once: the fields fill them in and --help shows them. */
export const DEFAULTS = {
  clusterName: 'cluster',
  interval: '5m',
  confirmAfter: '30s',
  maxRemovalsPerCycle: DEFAULT_MAX_REMOVALS_PER_CYCLE,
  cleanupTimeout: '5m',
  routeLimit: DEFAULT_ROUTE_LIMIT,
  routeLimitHeadroom: 3,
  writeMode: 'auto',
} as const;

export const routegcFields = {
  ...clusterAccessFields,
  router: z.string({ error: "give the ID of the cluster's Neutron router" }).check(z.minLength(1, "give the ID of the cluster's Neutron router")),
  clusterCidr: clusterCidrField,
  clusterUid: z.optional(z.string().check(z.regex(/^[A-Za-z0-9-]{1,36}$/, 'expected the ManagedCluster\'s metadata.uid (letters, digits, "-")'))),
  allowWideClusterCidr: z.prefault(boolean, false),
  forceClusterCidr: z.prefault(boolean, false),
  clusterName: z._default(z.string().check(z.minLength(1)), DEFAULTS.clusterName),
  pool: z._default(z.array(z.string().check(z.minLength(1))), []),
  instancePrefix: z._default(
    z.array(
      z.string().check(
        z.minLength(2),
        z.refine((p: string) => p.endsWith('-'), {
          error: (i) => `instance prefix "${String(i.input)}" must end with the "-" before the 5-character suffix, such as kks-k1-small-`,
        }),
      ),
    ),
    [],
  ),
  interval: z.prefault(duration({ min: 1000 }), DEFAULTS.interval),
  once: z.prefault(boolean, false),
  confirmAfter: z.prefault(duration({ min: MIN_CONFIRM_AFTER_MS }), DEFAULTS.confirmAfter),
  maxRemovalsPerCycle: z.prefault(integer(0, 1000), DEFAULTS.maxRemovalsPerCycle),
  dryRun: z.prefault(boolean, false),
  cleanup: z.prefault(boolean, false),
  cleanupTimeout: z.prefault(duration({ min: 1000 }), DEFAULTS.cleanupTimeout),
  routeLimit: z.prefault(integer(1, 100_000), DEFAULTS.routeLimit),
  routeLimitHeadroom: z.prefault(integer(0, 1000), DEFAULTS.routeLimitHeadroom),
  writeMode: z._default(z.enum(['auto', 'atomic', 'revision', 'plain'], { error: 'expected auto, atomic, revision or plain' }), DEFAULTS.writeMode),
};

/** The routegc mode's settings: flags, help, fields, admin port and the checks across keys. */
export const routegcDeclaration: ModeDeclaration<typeof routegcFields> = {
  name: 'routegc',
  summary: "remove a cluster's orphaned and duplicate routes from its Neutron router",
  helpAfter: `A route is the cluster's only when its whole destination lies inside --cluster-cidr. One of those is
removed when its next hop is no address of the cluster's instances or Nodes (orphaned), or when it
loses a duplicate destination to the route reaching the Node that owns that pod CIDR - and only after
two cycles at least --confirm-after apart found it so, at most --max-removals-per-cycle per cycle.
Nothing is removed while the view is in doubt: an empty Node list without --pool/--instance-prefix,
an empty or suddenly shrunk Node or instance list, a Nova server listed as UNKNOWN (a down cell),
or Node pod CIDRs outside --cluster-cidr. --cluster-cidr must be /8 or narrower (IPv6 /32) unless
--allow-wide-cluster-cidr; /0 is never accepted; one more than 8 bits wider than the prefix covering
the Nodes' pod CIDRs exits 2 unless --force-cluster-cidr. An orphan is a route whose next hop no
port on the router's networks holds, whoever owns the port. Removal uses remove_extraroutes (extraroute-atomic),
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
    {
      key: 'clusterUid',
      value: '<uid>',
      help: "the owner id to recognise: the ManagedCluster's metadata.uid, to act as the operator does",
      defaultText: "the cluster's kube-system namespace UID",
    },
    { key: 'allowWideClusterCidr', help: 'accept a --cluster-cidr wider than /8 (IPv6 /32); /0 is refused anyway' },
    {
      key: 'forceClusterCidr',
      help: "accept a --cluster-cidr more than 8 bits wider than the prefix covering the Nodes' pod CIDRs (exit 2 otherwise)",
    },
    { key: 'clusterName', value: '<name>', help: 'the cluster (kks-<name>-<pool>-xxxxx instances), in metrics and events', defaultText: DEFAULTS.clusterName },
    { key: 'pool', value: '<name>', help: "node pool: instances kks-<cluster>-<pool>-xxxxx are the cluster's (letters and digits only)", repeatable: true },
    {
      key: 'instancePrefix',
      value: '<prefix>',
      help: "pool prefix ending in '-': an instance named <prefix> + 5 letters/digits is the cluster's (e.g. kks-k1-small-)",
      repeatable: true,
    },
    { key: 'interval', value: '<duration>', help: 'time between cycles (plus 0-50 % jitter)', defaultText: DEFAULTS.interval },
    { key: 'once', help: 'look twice, act, and exit' },
    { key: 'confirmAfter', value: '<duration>', help: 'least time between the two sightings of a removal (at least 10s)', defaultText: DEFAULTS.confirmAfter },
    { key: 'maxRemovalsPerCycle', value: '<n>', help: 'route removals per cycle; the rest wait', defaultText: String(DEFAULTS.maxRemovalsPerCycle) },
    { key: 'dryRun', help: 'log and record what would be removed; change nothing' },
    { key: 'cleanup', help: 'termination: remove every route in the cluster CIDR, wait until gone, exit' },
    { key: 'cleanupTimeout', value: '<duration>', help: 'with --cleanup: give up after this long', defaultText: DEFAULTS.cleanupTimeout },
    { key: 'routeLimit', value: '<n>', help: "Neutron's max_routes for the router", defaultText: String(DEFAULTS.routeLimit) },
    { key: 'routeLimitHeadroom', value: '<n>', help: 'warn when fewer free route slots than this remain', defaultText: String(DEFAULTS.routeLimitHeadroom) },
    {
      key: 'writeMode',
      value: '<auto|atomic|revision|plain>',
      help: "auto picks extraroute-atomic, else revision-if-match, else plain, from Neutron's extensions",
      defaultText: DEFAULTS.writeMode,
    },
  ],
  fields: routegcFields,
  adminPort: 9454,
  check: (c) => {
    if (c.once && c.cleanup) return '--once and --cleanup exclude each other: pick one';
    const cidr = clusterCidrProblem(c.clusterCidr, { allowWide: c.allowWideClusterCidr });
    if (cidr) return `--cluster-cidr: ${cidr}`;
    const pool = c.pool.map(poolNameProblem).find((p) => p !== undefined);
    return pool ? `--pool: ${pool}` : undefined;
  },
};
