// kubeward operator's settings: the zod fields (flags and file), the flags' help, the controller
// list and the checks across keys (moved as they were from src/cli/operator.ts). The command
// (src/cli/operator.ts), --help and docs/operator.md come from here.
// zod/mini, as the daemons: the build leaves classic zod out (src/config/fields.ts says why).
import * as z from 'zod/mini';
import { UsageError } from '../../base/errors.ts';
import { boolean, duration, integer, textField } from '../../config/fields.ts';
import type { ModeDeclaration, ModeFlag } from '../../config/mode-declaration.ts';
import type { ControllerName } from './operator.ts';
import { DEFAULT_BUDGETS } from '../managed-cluster/blast-budget.ts';
import { DEFAULT_ROUTE_LIMIT, MIN_CONFIRM_AFTER_MS } from '../routegc/decide-routegc.ts';
import { deorbitTuningFields, deorbitTuningFlags } from '../deorbit/deorbit-config.ts';
import { MAX_SHARDS, parseShard, SHARD_LABEL } from './shard.ts';

const KNOWN: readonly ControllerName[] = ['deorbit', 'routegc', 'flight'];

const prefixed = Object.fromEntries(Object.entries(deorbitTuningFields).map(([k, v]) => [`deorbit${k[0]!.toUpperCase()}${k.slice(1)}`, v])) as {
  deorbitPollInterval: typeof deorbitTuningFields.pollInterval;
  deorbitAttemptTimeout: typeof deorbitTuningFields.attemptTimeout;
  deorbitApiUnavailableTimeout: typeof deorbitTuningFields.apiUnavailableTimeout;
  deorbitLegacyServiceGrace: typeof deorbitTuningFields.legacyServiceGrace;
  deorbitCsiDriver: typeof deorbitTuningFields.csiDriver;
  deorbitMaxDeletesPerPass: typeof deorbitTuningFields.maxDeletesPerPass;
};

/** The operator's defaults, read by the fields, --help and docs/operator.md. */
export const DEFAULTS = {
  controllers: 'deorbit,routegc,flight',
  leaderElect: true,
  leaseName: 'kubeward-operator',
  leaseDuration: '15s',
  renewDeadline: '10s',
  retryPeriod: '2s',
  workers: 4,
  resync: '5m',
  deorbitHangTimeout: '24h',
  deorbitDryRun: false,
  routegcInterval: '5m',
  routegcConfirmAfter: '30s',
  routegcDryRun: false,
  routeLimit: DEFAULT_ROUTE_LIMIT,
  routeLimitHeadroom: 3,
  flightInterval: '5m',
  flightDryRun: false,
  flightRepairMissingRoutes: false,
  flightForceSecurityGroupResync: false,
  flightSoftRebootAfter: '10m',
  flightHardRebootAfter: '5m',
  flightDeleteAfter: '15m',
  flightRebootBeforeDelete: true,
} as const;

export const operatorFields = {
  kubeconfig: z.optional(z.string().check(z.minLength(1))),
  context: z.optional(z.string().check(z.minLength(1))),
  namespace: z.optional(z.string().check(z.minLength(1))),
  controllers: z._default(z.string(), DEFAULTS.controllers),
  leaderElect: z._default(boolean, DEFAULTS.leaderElect),
  leaseNamespace: z.optional(z.string().check(z.minLength(1))),
  leaseName: z._default(z.string().check(z.minLength(1)), DEFAULTS.leaseName),
  leaseDuration: z.prefault(duration({ min: 1000 }), DEFAULTS.leaseDuration),
  renewDeadline: z.prefault(duration({ min: 500 }), DEFAULTS.renewDeadline),
  retryPeriod: z.prefault(duration({ min: 100 }), DEFAULTS.retryPeriod),
  identity: z.optional(z.string().check(z.minLength(1))),
  shard: z.optional(textField(parseShard, 'expected a shard such as 0/2')),
  workers: z._default(integer(1, 64), DEFAULTS.workers),
  resync: z.prefault(duration({ min: 1000 }), DEFAULTS.resync),
  deorbitHangTimeout: z.prefault(duration({ min: 1000 }), DEFAULTS.deorbitHangTimeout),
  deorbitDryRun: z.prefault(boolean, DEFAULTS.deorbitDryRun),
  ...prefixed,
  routegcInterval: z.prefault(duration({ min: 1000 }), DEFAULTS.routegcInterval),
  routegcConfirmAfter: z.prefault(duration({ min: MIN_CONFIRM_AFTER_MS }), DEFAULTS.routegcConfirmAfter),
  routegcDryRun: z.prefault(boolean, DEFAULTS.routegcDryRun),
  routegcMaxRemovalsPerCycle: z.prefault(integer(0, 1000), DEFAULT_BUDGETS['route-removal']),
  routeLimit: z.prefault(integer(1, 100_000), DEFAULTS.routeLimit),
  routeLimitHeadroom: z.prefault(integer(0, 1000), DEFAULTS.routeLimitHeadroom),
  flightInterval: z.prefault(duration({ min: 1000 }), DEFAULTS.flightInterval),
  flightDryRun: z.prefault(boolean, DEFAULTS.flightDryRun),
  flightRepairMissingRoutes: z.prefault(boolean, DEFAULTS.flightRepairMissingRoutes),
  flightForceSecurityGroupResync: z.prefault(boolean, DEFAULTS.flightForceSecurityGroupResync),
  flightMaxDeletionsPerRound: z.prefault(integer(0, 1000), DEFAULT_BUDGETS.delete),
  flightMaxRebootsPerRound: z.prefault(integer(0, 1000), DEFAULT_BUDGETS.reboot),
  flightMaxMetadataWritesPerRound: z.prefault(integer(0, 10_000), DEFAULT_BUDGETS.metadata),
  flightMaxRuleChangesPerRound: z.prefault(integer(0, 1000), DEFAULT_BUDGETS.rule),
  flightSoftRebootAfter: z.prefault(duration(), DEFAULTS.flightSoftRebootAfter),
  flightHardRebootAfter: z.prefault(duration(), DEFAULTS.flightHardRebootAfter),
  flightDeleteAfter: z.prefault(duration(), DEFAULTS.flightDeleteAfter),
  flightRebootBeforeDelete: z.prefault(boolean, DEFAULTS.flightRebootBeforeDelete),
};

/** routegc's and flight's operator-wide flags; a cluster's own router, CIDR, group and pools come from its spec. */
const routegcFlightFlags: ModeFlag[] = [
  {
    key: 'routegcInterval',
    value: '<duration>',
    help: 'routegc: time between cycles of one cluster (plus 0-50 % jitter)',
    defaultText: DEFAULTS.routegcInterval,
  },
  {
    key: 'routegcConfirmAfter',
    value: '<duration>',
    help: 'routegc: least time between the two sightings of a route before it is removed (at least 10s; the cycle after that removes it)',
    defaultText: DEFAULTS.routegcConfirmAfter,
  },
  {
    key: 'routegcDryRun',
    help: 'routegc: record what would be removed (events RouteWouldBeRemoved), remove nothing; termination does not wait for routes then',
  },
  {
    key: 'routegcMaxRemovalsPerCycle',
    value: '<n>',
    help: 'routegc: route removals per cluster and cycle; the rest wait',
    defaultText: String(DEFAULT_BUDGETS['route-removal']),
  },
  {
    key: 'routeLimit',
    value: '<n>',
    help: "routegc and flight: Neutron's max_routes per router (flight learns the real one from RoutesExhausted)",
    defaultText: String(DEFAULTS.routeLimit),
  },
  {
    key: 'routeLimitHeadroom',
    value: '<n>',
    help: 'routegc: warn (RouteLimitApproaching) when fewer free route slots than this remain',
    defaultText: String(DEFAULTS.routeLimitHeadroom),
  },
  { key: 'flightInterval', value: '<duration>', help: 'flight: time between rounds of one cluster (plus 0-50 % jitter)', defaultText: DEFAULTS.flightInterval },
  { key: 'flightDryRun', help: 'flight: record the repairs (events FlightWouldRepair), change nothing' },
  { key: 'flightRepairMissingRoutes', help: "flight: add the route of a Node whose pod CIDR has none on the cluster's router" },
  { key: 'flightForceSecurityGroupResync', help: 'flight: touch the group when a Node reports broken pod traffic' },
  { key: 'flightMaxDeletionsPerRound', value: '<n>', help: 'flight: instance deletions per cluster and round', defaultText: String(DEFAULT_BUDGETS.delete) },
  { key: 'flightMaxRebootsPerRound', value: '<n>', help: 'flight: instance reboots per cluster and round', defaultText: String(DEFAULT_BUDGETS.reboot) },
  {
    key: 'flightMaxMetadataWritesPerRound',
    value: '<n>',
    help: 'flight: tag and metadata calls per cluster and round',
    defaultText: String(DEFAULT_BUDGETS.metadata),
  },
  {
    key: 'flightMaxRuleChangesPerRound',
    value: '<n>',
    help: 'flight: security-group rule changes and assignments per cluster and round',
    defaultText: String(DEFAULT_BUDGETS.rule),
  },
  {
    key: 'flightSoftRebootAfter',
    value: '<duration>',
    help: 'flight: an instance that never became a Node is soft-rebooted at this age',
    defaultText: DEFAULTS.flightSoftRebootAfter,
  },
  { key: 'flightHardRebootAfter', value: '<duration>', help: 'flight: then hard-rebooted this long after', defaultText: DEFAULTS.flightHardRebootAfter },
  { key: 'flightDeleteAfter', value: '<duration>', help: 'flight: then deleted this long after', defaultText: DEFAULTS.flightDeleteAfter },
  { key: 'flightRebootBeforeDelete', help: 'flight: reboot before deleting', negatable: true, defaultText: 'on' },
];

/** "tenant-a,tenant-b" → the namespaces, each a DNS-1123 label; anything else is a usage error. */
export function parseNamespaces(text: string): string[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names) {
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(n))
      throw new UsageError(`--namespace: "${n}" is not a namespace name (lower-case letters, digits and "-", at most 63); separate several with commas`);
  }
  if (names.length === 0) throw new UsageError('--namespace: name at least one namespace, or leave the key out for every namespace');
  return [...new Set(names)];
}

/**
 * Where the operator looks, from its namespaces (undefined: every one). One namespace: the
 * ManagedCluster informer lists only there. Several: it lists every namespace (ManagedClusters hold
 * references, no credentials) and `inScope` keeps clusters elsewhere out of the controllers, so no
 * Secret outside the watched namespaces is ever asked for.
 */
export function namespaceScope(namespaces: readonly string[] | undefined): {
  informerNamespace: string | undefined;
  inScope: ((namespace: string | undefined) => boolean) | undefined;
} {
  if (namespaces === undefined || namespaces.length === 0) return { informerNamespace: undefined, inScope: undefined };
  if (namespaces.length === 1) return { informerNamespace: namespaces[0], inScope: undefined };
  const set = new Set(namespaces);
  return { informerNamespace: undefined, inScope: (ns) => ns !== undefined && set.has(ns) };
}

/** "deorbit,routegc" → the names; unknown names are a usage error. */
export function parseControllers(text: string): ControllerName[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names) {
    if (!KNOWN.includes(n as ControllerName)) throw new UsageError(`--controllers: unknown controller "${n}"; choose from ${KNOWN.join(', ')}`);
  }
  if (names.length === 0) throw new UsageError('--controllers: name at least one controller, e.g. deorbit');
  return [...new Set(names)] as ControllerName[];
}

/** The operator mode's settings: flags, help, fields, admin port and the checks across keys. */
export const operatorDeclaration: ModeDeclaration<typeof operatorFields> = {
  name: 'operator',
  summary: 'run the cluster controllers (deorbit, routegc, flight) for every ManagedCluster',
  helpAfter: `Watches kubeward.io/v1alpha1 ManagedClusters (deploy/operator/ has the CRD, RBAC and a Deployment).
Inside a pod it uses the service account; elsewhere give --kubeconfig of the management cluster.

deorbit cleans up a deleted cluster's load balancers and Cinder volumes (then, when routegc runs,
removes its routes and waits for them before the finalizer goes); routegc removes orphaned and
duplicate routes of Running clusters; flight repairs their known OpenStack failure modes. The
--deorbit-*, --routegc-*, --route-limit* and --flight-* flags apply to every cluster; each cluster's
router, CIDR, security group and node pools come from its spec.

Example:
  kubeward operator --kubeconfig ./mgmt.kubeconfig --controllers deorbit,routegc,flight --lease-namespace kubeward-system`,
  flags: [
    { key: 'kubeconfig', value: '<file>', help: 'management cluster kubeconfig (default: in-cluster service account)' },
    { key: 'context', value: '<name>', help: 'kubeconfig context' },
    {
      key: 'namespace',
      value: '<ns,...>',
      help: 'only ManagedClusters (and their Secrets) of these comma-separated namespaces; the namespaced install grants Secret reads there only (default: every namespace, which needs cluster-wide Secret reads)',
    },
    { key: 'controllers', value: '<list>', help: 'comma-separated controllers to run', defaultText: DEFAULTS.controllers },
    { key: 'leaderElect', help: 'elect one active replica through a Lease', negatable: true, defaultText: 'on' },
    { key: 'leaseNamespace', value: '<ns>', help: 'namespace of the Lease', defaultText: '$POD_NAMESPACE or kubeward-system' },
    { key: 'leaseName', value: '<name>', help: 'name of the Lease', defaultText: DEFAULTS.leaseName },
    { key: 'leaseDuration', value: '<duration>', help: 'a silent leader keeps the lease this long', defaultText: DEFAULTS.leaseDuration },
    { key: 'renewDeadline', value: '<duration>', help: 'a leader that cannot renew for this long steps down', defaultText: DEFAULTS.renewDeadline },
    { key: 'retryPeriod', value: '<duration>', help: 'time between lease attempts', defaultText: DEFAULTS.retryPeriod },
    { key: 'identity', value: '<name>', help: 'this replica in the Lease', defaultText: '$POD_NAME or host name + random' },
    {
      key: 'shard',
      value: '<i/N>',
      help: `act only for the ManagedClusters of shard i of N (0 ≤ i < N ≤ ${MAX_SHARDS}; by a hash of namespace/name, or the ${SHARD_LABEL} label); the Lease becomes <lease-name>-shard-i-of-N (docs/operator-sharding.md)`,
      defaultText: 'every cluster',
    },
    {
      key: 'workers',
      value: '<n>',
      help: 'least number of clusters reconciled in parallel per controller (one more per 10 clusters, up to 256)',
      defaultText: String(DEFAULTS.workers),
    },
    { key: 'resync', value: '<duration>', help: 'every cluster is looked at again at least this often', defaultText: DEFAULTS.resync },
    {
      key: 'deorbitDryRun',
      help: 'deorbit: report what each pass would delete and wait for (event DeorbitDryRun, condition reason DryRun); delete nothing, add or remove no finalizer',
    },
    {
      key: 'deorbitHangTimeout',
      value: '<duration>',
      help: 'deorbit gives up (records the debris, removes its finalizer) this long after deletion',
      defaultText: DEFAULTS.deorbitHangTimeout,
    },
    ...deorbitTuningFlags.map((f) => ({ ...f, key: `deorbit${f.key[0]!.toUpperCase()}${f.key.slice(1)}` })),
    ...routegcFlightFlags,
  ],
  fields: operatorFields,
  adminPort: 9453,
  check: (cfg) => {
    try {
      parseControllers(cfg.controllers);
      if (cfg.namespace !== undefined) parseNamespaces(cfg.namespace);
    } catch (err) {
      return (err as Error).message;
    }
    return cfg.leaderElect && cfg.renewDeadline >= cfg.leaseDuration ? '--renew-deadline must be shorter than --lease-duration' : undefined;
  },
};
