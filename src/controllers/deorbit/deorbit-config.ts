// kubeward deorbit's settings: defaults, the zod fields (flags and file), the flags' help, and the
// checks across keys; the timing fields are shared with kubeward operator (prefixed there). The
// command (src/cli/deorbit.ts), --help and docs/operator.md come from here.
// zod/mini, as the daemons: the build leaves classic zod out (src/config/fields.ts says why).
import * as z from 'zod/mini';
import { boolean, duration, integer } from '../../config/fields.ts';
import type { ModeDeclaration, ModeFlag } from '../../config/mode-declaration.ts';
import { DEFAULT_DEORBIT_SETTINGS } from './deorbit-types.ts';

/** The defaults, once: the fields fill them in and --help shows them (CSI drivers and budget: DEFAULT_DEORBIT_SETTINGS). */
export const DEFAULTS = {
  pollInterval: '15s',
  attemptTimeout: '10m',
  apiUnavailableTimeout: '2m',
  legacyServiceGrace: '5m',
  timeout: '30m',
  lbClusterName: 'kubernetes',
} as const;

/** Deorbit timings and volume selection, shared with `kubeward operator` (prefixed there). */
export const deorbitTuningFields = {
  pollInterval: z.prefault(duration({ min: 100 }), DEFAULTS.pollInterval),
  attemptTimeout: z.prefault(duration({ min: 1000 }), DEFAULTS.attemptTimeout),
  apiUnavailableTimeout: z.prefault(duration({ min: 1000 }), DEFAULTS.apiUnavailableTimeout),
  legacyServiceGrace: z.prefault(duration(), DEFAULTS.legacyServiceGrace),
  csiDriver: z._default(z.array(z.string().check(z.minLength(1))), [...DEFAULT_DEORBIT_SETTINGS.csiDrivers]),
  maxDeletesPerPass: z.prefault(integer(1, 1000), DEFAULT_DEORBIT_SETTINGS.maxDeletesPerPass),
};

export const deorbitTuningFlags: ModeFlag[] = [
  {
    key: 'pollInterval',
    value: '<duration>',
    help: 'time between looks while waiting for volumes and load balancers to go',
    defaultText: DEFAULTS.pollInterval,
  },
  {
    key: 'attemptTimeout',
    value: '<duration>',
    help: 'one attempt waits at most this long, then starts over (re-issuing deletes)',
    defaultText: DEFAULTS.attemptTimeout,
  },
  {
    key: 'apiUnavailableTimeout',
    value: '<duration>',
    help: "give up when the cluster's API fails without a single success for this long",
    defaultText: DEFAULTS.apiUnavailableTimeout,
  },
  {
    key: 'legacyServiceGrace',
    value: '<duration>',
    help: 'clusters before 1.17: LB Services count as gone this long after deletion',
    defaultText: DEFAULTS.legacyServiceGrace,
  },
  {
    key: 'csiDriver',
    value: '<name>',
    help: "CSI driver whose volumes and snapshot classes are Cinder's",
    defaultText: DEFAULT_DEORBIT_SETTINGS.csiDrivers.join(', '),
    repeatable: true,
  },
  {
    key: 'maxDeletesPerPass',
    value: '<n>',
    help: 'blast-radius budget: at most this many deletions per pass, the rest in later passes',
    defaultText: String(DEFAULT_DEORBIT_SETTINGS.maxDeletesPerPass),
  },
];

export const deorbitFields = {
  kubeconfig: z.string().check(z.minLength(1, "give the path of the cluster's kubeconfig")),
  context: z.optional(z.string().check(z.minLength(1))),
  dryRun: z.prefault(boolean, false),
  osCloud: z.optional(z.string().check(z.minLength(1))),
  timeout: z.prefault(duration({ min: 1000 }), DEFAULTS.timeout),
  lbClusterName: z._default(z.string().check(z.minLength(1)), DEFAULTS.lbClusterName),
  clusterVersion: z.optional(z.string().check(z.minLength(1))),
  ...deorbitTuningFields,
};

/** The deorbit mode's settings: flags, help, fields, admin port and the checks across keys. */
export const deorbitDeclaration: ModeDeclaration<typeof deorbitFields> = {
  name: 'deorbit',
  summary: "clean up one cluster's load balancers and Cinder volumes before it is deleted, then exit",
  helpAfter: `Deletes every VolumeSnapshot of a Cinder snapshot class, every Bound claim on a Cinder volume
(in-tree or the CSI drivers given) and every LoadBalancer Service, at most --max-deletes-per-pass per
pass, then waits until those snapshots are gone, Cinder no longer has the volumes, and Octavia no
longer has the cluster's load balancers (matched exactly: the ID the cloud controller annotated, or
kube_service_<cluster>_<namespace>_<service> for a Service seen; never by prefix, and never by name
when --lb-cluster-name is the shared default "kubernetes"; never one a Service reuses by annotation).
Keeps snapshots of backup classes (parameters.type: backup) and anything labelled
kubeward.io/deorbit=keep; deletes the pods, and the controllers behind them, that still mount a
claim it deleted. Waits on Cinder by volume ID until 404, whatever happened to the PVs.
Retain-policy and unclaimed volumes are reported and not waited for. An answer that cannot be read
(an HTML page, a paging loop) holds.
--context is required: deorbit never acts on a kubeconfig's current-context.
Exit 0: clean (dry run: judged); 1: timeout, the cluster's API stayed unavailable, or (dry run) the
cluster could not be judged; 2: bad usage.

Example:
  kubeward deorbit --kubeconfig ./k1.kubeconfig --context k1-admin --os-cloud k1 --lb-cluster-name k1 --dry-run`,
  flags: [
    { key: 'kubeconfig', value: '<file>', help: 'kubeconfig of the cluster to clean up (required)' },
    { key: 'context', value: '<name>', help: 'kubeconfig context of the cluster to clean up (required; current-context is never assumed)' },
    { key: 'dryRun', help: 'decide once as the real run would, print what it would delete and wait for, delete nothing' },
    { key: 'osCloud', value: '<name>', help: 'cloud entry in clouds.yaml (default: $OS_CLOUD, or the OS_* variables alone)' },
    { key: 'timeout', value: '<duration>', help: 'give up after this long and list the leftovers', defaultText: DEFAULTS.timeout },
    { key: 'lbClusterName', value: '<name>', help: "the cloud controller's --cluster-name (names its load balancers)", defaultText: DEFAULTS.lbClusterName },
    { key: 'clusterVersion', value: '<version>', help: "the cluster's Kubernetes version (default: asked from its API)" },
    ...deorbitTuningFlags,
  ],
  fields: deorbitFields,
  adminPort: null,
  check: (cfg) => (cfg.context ? undefined : '--context: name the kubeconfig context of the cluster to clean up; deorbit never acts on the current-context'),
};
