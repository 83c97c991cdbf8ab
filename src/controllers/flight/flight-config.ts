// kubeward flight's settings: defaults, the zod fields (flags and file), the flags' help, and the
// checks across keys. The command (src/cli/flight.ts), --help and docs/flight.md come from here.
// zod/mini, as the daemons: the build leaves classic zod out (src/config/fields.ts says why).
import * as z from 'zod/mini';
import { boolean, duration, integer } from '../../config/fields.ts';
import type { ModeDeclaration } from '../../config/mode-declaration.ts';
import { clusterAccessFields, clusterCidrField } from '../managed-cluster/cluster-cli-fields.ts';
import { DEFAULT_BUDGETS } from '../managed-cluster/blast-budget.ts';
import { clusterCidrProblem } from '../managed-cluster/cidr-scope.ts';
import { poolNameProblem } from '../managed-cluster/cluster-identity.ts';
import { parseOwnerMetadata } from '../managed-cluster/provisioner-claims.ts';
import { DEFAULT_ROUTE_LIMIT } from '../routegc/decide-routegc.ts';

/** The defaults, once: the fields fill them in and --help shows them (the budgets: DEFAULT_BUDGETS). */
export const DEFAULTS = {
  interval: '5m',
  softRebootAfter: '10m',
  hardRebootAfter: '5m',
  deleteAfter: '15m',
  role: ['member', 'network_admin'],
  routeLimit: DEFAULT_ROUTE_LIMIT,
} as const;

export const flightFields = {
  ...clusterAccessFields,
  adminOsCloud: z.optional(z.string().check(z.minLength(1))),
  clusterName: z
    .string({ error: "give the cluster's name (kks-<name>-<pool>-xxxxx instances)" })
    .check(z.minLength(1, "give the cluster's name (kks-<name>-<pool>-xxxxx instances)")),
  clusterCidr: clusterCidrField,
  securityGroup: z.string({ error: "give the name of the cluster's security group" }).check(z.minLength(1, "give the name of the cluster's security group")),
  pool: z._default(z.array(z.string().check(z.minLength(1))), []),
  router: z.optional(z.string().check(z.minLength(1))),
  interval: z.prefault(duration({ min: 1000 }), DEFAULTS.interval),
  once: z.prefault(boolean, false),
  dryRun: z.prefault(boolean, false),
  softRebootAfter: z.prefault(duration(), DEFAULTS.softRebootAfter),
  hardRebootAfter: z.prefault(duration(), DEFAULTS.hardRebootAfter),
  deleteAfter: z.prefault(duration(), DEFAULTS.deleteAfter),
  rebootBeforeDelete: z.prefault(boolean, true),
  maxDeletionsPerRound: z.prefault(integer(0, 1000), DEFAULT_BUDGETS.delete),
  maxRebootsPerRound: z.prefault(integer(0, 1000), DEFAULT_BUDGETS.reboot),
  maxMetadataWritesPerRound: z.prefault(integer(0, 10_000), DEFAULT_BUDGETS.metadata),
  maxRuleChangesPerRound: z.prefault(integer(0, 1000), DEFAULT_BUDGETS.rule),
  clusterUid: z.optional(z.string().check(z.regex(/^[A-Za-z0-9-]{1,36}$/, 'expected the ManagedCluster\'s metadata.uid (letters, digits, "-")'))),
  ownerMetadata: z._default(z.array(z.string().check(z.minLength(1))), []),
  adoptOwner: z._default(z.array(z.string().check(z.regex(/^[A-Za-z0-9-]{1,36}$/, 'expected an earlier owner id (letters, digits, "-")'))), []),
  allowWideClusterCidr: z.prefault(boolean, false),
  forceClusterCidr: z.prefault(boolean, false),
  role: z._default(z.array(z.string().check(z.minLength(1))), [...DEFAULTS.role]),
  checkRoles: z.prefault(boolean, true),
  forceSecurityGroupResync: z.prefault(boolean, false),
  repairMissingRoutes: z.prefault(boolean, false),
  routeLimit: z.prefault(integer(1, 100_000), DEFAULTS.routeLimit),
};

/** The flight mode's settings: flags, help, fields, admin port and the checks across keys. */
export const flightDeclaration: ModeDeclaration<typeof flightFields> = {
  name: 'flight',
  summary: "repair a cluster's known OpenStack failure modes (security group, stuck and errored instances, roles, tags, routes)",
  helpAfter: `Each round, independently: ingress udp/tcp/icmp rules from --cluster-cidr in --security-group; the group on
every running instance; instances that never became Nodes (soft reboot after --soft-reboot-after,
hard reboot --hard-reboot-after later, deletion --delete-after after that, at most
--max-deletions-per-round, never while the Nodes cannot be read, never for an instance whose Node
existed); errored instances deleted; the service user's roles (assigned with --admin-os-cloud);
tags and metadata on instances; with --router, Node conditions kubeward.io/RouteMissing and
kubeward.io/RouteConflict, and with --repair-missing-routes the missing routes added.
Only instances proven to be the cluster's are touched: a Node's providerID names them, they carry
the provisioner's owner metadata for the cluster (Kubernikus's provisioner=kubernikus and
kubernikus:kluster=<cluster>; --owner-metadata for others), or kubeward's stamp (kubeward:owner=<id>,
written by flight only after one of those proofs). A name proves nothing: a server only named like a
Node or like kks-<cluster>-<pool>-xxxxx, or sharing its name with another server, is left alone.
Servers stamped by another owner id are left alone; --adopt-owner <old id> takes them over after a
restore. An instance with a Node that is not NotReady (matched by providerID, name or address) is
never rebooted or deleted, whatever Nova says of it. Nothing is rebooted,
deleted, labelled or opened while the view is in doubt (empty or sharply shrunk Node or instance
list, a Nova server listed as UNKNOWN, Node pod CIDRs outside --cluster-cidr), and each round does at
most --max-reboots/deletions/metadata-writes/rule-changes-per-round of each kind. Rules are never
created from 0.0.0.0/0 or ::/0; --cluster-cidr wider than /8 (IPv6 /32) needs --allow-wide-cluster-cidr.

--once runs one round and exits: 0 all repairs done, 1 some failed or the round refused, 2 bad usage.

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
    { key: 'interval', value: '<duration>', help: 'time between rounds (plus 0-50 % jitter)', defaultText: DEFAULTS.interval },
    { key: 'once', help: 'one round, then exit' },
    { key: 'dryRun', help: 'log and record the repairs; change nothing' },
    { key: 'softRebootAfter', value: '<duration>', help: 'an unregistered instance this old is soft-rebooted', defaultText: DEFAULTS.softRebootAfter },
    { key: 'hardRebootAfter', value: '<duration>', help: 'then hard-rebooted this long after', defaultText: DEFAULTS.hardRebootAfter },
    { key: 'deleteAfter', value: '<duration>', help: 'then deleted this long after', defaultText: DEFAULTS.deleteAfter },
    { key: 'rebootBeforeDelete', help: 'reboot before deleting', defaultText: 'on', negatable: true },
    { key: 'maxDeletionsPerRound', value: '<n>', help: 'instance deletions per round', defaultText: String(DEFAULT_BUDGETS.delete) },
    { key: 'maxRebootsPerRound', value: '<n>', help: 'instance reboots per round', defaultText: String(DEFAULT_BUDGETS.reboot) },
    { key: 'maxMetadataWritesPerRound', value: '<n>', help: 'tag and metadata calls per round', defaultText: String(DEFAULT_BUDGETS.metadata) },
    {
      key: 'maxRuleChangesPerRound',
      value: '<n>',
      help: 'security-group rule changes and group assignments per round',
      defaultText: String(DEFAULT_BUDGETS.rule),
    },
    {
      key: 'clusterUid',
      value: '<uid>',
      help: "the owner id to prove and write: the ManagedCluster's metadata.uid, to act as the operator does",
      defaultText: "the cluster's kube-system namespace UID",
    },
    {
      key: 'ownerMetadata',
      value: '<key=value>',
      help: "metadata the provisioner writes on the cluster's servers, all of it required (e.g. openshiftClusterID=<infraID>)",
      repeatable: true,
    },
    { key: 'adoptOwner', value: '<id>', help: 'adopt servers stamped with this earlier owner id (after a restore) and re-stamp them', repeatable: true },
    { key: 'allowWideClusterCidr', help: 'accept a --cluster-cidr wider than /8 (IPv6 /32); /0 is refused anyway' },
    { key: 'forceClusterCidr', help: "open the group to a --cluster-cidr more than 8 bits wider than the prefix covering the Nodes' pod CIDRs" },
    { key: 'role', value: '<name>', help: 'role the service user needs on the project', defaultText: DEFAULTS.role.join(', '), repeatable: true },
    { key: 'checkRoles', help: "check the service user's roles", defaultText: 'on', negatable: true },
    { key: 'forceSecurityGroupResync', help: 'touch the group when a Node reports broken pod traffic (NetworkUnavailable or kubeward.io/pod-network-broken)' },
    { key: 'repairMissingRoutes', help: 'add the route of a Node whose pod CIDR has none (within the route limit)' },
    { key: 'routeLimit', value: '<n>', help: "Neutron's max_routes for the router", defaultText: String(DEFAULTS.routeLimit) },
  ],
  fields: flightFields,
  adminPort: 9455,
  check: (c) => {
    const cidr = clusterCidrProblem(c.clusterCidr, { allowWide: c.allowWideClusterCidr });
    if (cidr) return `--cluster-cidr: ${cidr}`;
    const pool = c.pool.map(poolNameProblem).find((p) => p !== undefined);
    if (pool) return `--pool: ${pool}`;
    const owned = parseOwnerMetadata(c.ownerMetadata, c.clusterName);
    return owned.problem ? `--owner-metadata: ${owned.problem}` : undefined;
  },
};
