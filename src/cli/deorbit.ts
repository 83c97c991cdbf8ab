// kubeward deorbit: the composition root of single-cluster deorbit. Cleans up one cluster's
// LoadBalancer Services, Cinder-backed claims and VolumeSnapshots, waits until Octavia and Cinder
// show them gone, prints progress, and exits 0 when clean or 1 on timeout with the leftovers.
// It never acts on a kubeconfig's current-context: the context is named on the command line.
// --dry-run runs the same decision once and prints what would be deleted and waited for.
import { homedir } from 'node:os';
// zod/mini, as the daemons: the build leaves classic zod out (src/config/fields.ts says why).
import * as z from 'zod/mini';
import { systemClock } from '../base/clock.ts';
import { UsageError } from '../base/errors.ts';
import { boolean, duration, integer } from '../config/fields.ts';
import { createKubeApi } from '../clients/kube/kube-api.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig } from '../clients/kube/load-kube-config.ts';
import { openStackClientFor } from '../clients/openstack/create-openstack-client.ts';
import { openStackDeorbitCloud } from '../controllers/deorbit/deorbit-cloud.ts';
import { runDeorbitDryRun, runDeorbitOnce } from '../controllers/deorbit/deorbit-once.ts';
import { kubeDeorbitSatellite } from '../controllers/deorbit/deorbit-satellite.ts';
import { DEFAULT_DEORBIT_SETTINGS, type DeorbitSettings } from '../controllers/deorbit/deorbit-types.ts';
import { buildModeCommand, type ModeFlag } from './mode-command.ts';

/** Deorbit timings and volume selection, shared with `kubeward operator` (prefixed there). */
export const deorbitTuningFields = {
  pollInterval: z.prefault(duration({ min: 100 }), '15s'),
  attemptTimeout: z.prefault(duration({ min: 1000 }), '10m'),
  apiUnavailableTimeout: z.prefault(duration({ min: 1000 }), '2m'),
  legacyServiceGrace: z.prefault(duration(), '5m'),
  csiDriver: z._default(z.array(z.string().check(z.minLength(1))), [...DEFAULT_DEORBIT_SETTINGS.csiDrivers]),
  maxDeletesPerPass: z.prefault(integer(1, 1000), DEFAULT_DEORBIT_SETTINGS.maxDeletesPerPass),
};

export const deorbitTuningFlags: ModeFlag[] = [
  { key: 'pollInterval', value: '<duration>', help: 'time between looks while waiting for volumes and load balancers to go', defaultText: '15s' },
  { key: 'attemptTimeout', value: '<duration>', help: 'one attempt waits at most this long, then starts over (re-issuing deletes)', defaultText: '10m' },
  { key: 'apiUnavailableTimeout', value: '<duration>', help: "give up when the cluster's API fails without a single success for this long", defaultText: '2m' },
  { key: 'legacyServiceGrace', value: '<duration>', help: 'clusters before 1.17: LB Services count as gone this long after deletion', defaultText: '5m' },
  { key: 'csiDriver', value: '<name>', help: 'CSI driver whose volumes and snapshot classes are Cinder\'s', defaultText: 'cinder.csi.openstack.org', repeatable: true },
  { key: 'maxDeletesPerPass', value: '<n>', help: 'blast-radius budget: at most this many deletions per pass, the rest in later passes', defaultText: String(DEFAULT_DEORBIT_SETTINGS.maxDeletesPerPass) },
];

const fields = {
  kubeconfig: z.string().check(z.minLength(1, 'give the path of the cluster\'s kubeconfig')),
  context: z.optional(z.string().check(z.minLength(1))),
  dryRun: z.prefault(boolean, false),
  osCloud: z.optional(z.string().check(z.minLength(1))),
  timeout: z.prefault(duration({ min: 1000 }), '30m'),
  lbClusterName: z._default(z.string().check(z.minLength(1)), 'kubernetes'),
  clusterVersion: z.optional(z.string().check(z.minLength(1))),
  ...deorbitTuningFields,
};

export function deorbitCommand() {
  return buildModeCommand({
    name: 'deorbit',
    summary: 'clean up one cluster\'s load balancers and Cinder volumes before it is deleted, then exit',
    helpAfter: `Deletes every VolumeSnapshot of a Cinder snapshot class, every Bound claim on a Cinder volume
(in-tree or the CSI drivers given) and every LoadBalancer Service, at most --max-deletes-per-pass per
pass, then waits until those snapshots are gone, Cinder no longer has the volumes, and Octavia no
longer has the cluster's load balancers (matched exactly: the ID the cloud controller annotated, or
kube_service_<cluster>_<namespace>_<service> for a Service seen; never by prefix, and never by name
when --lb-cluster-name is the shared default "kubernetes"). Retain-policy and unclaimed volumes are
reported and not waited for. An answer that cannot be read (an HTML page, a paging loop) holds.
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
      { key: 'timeout', value: '<duration>', help: 'give up after this long and list the leftovers', defaultText: '30m' },
      { key: 'lbClusterName', value: '<name>', help: "the cloud controller's --cluster-name (names its load balancers)", defaultText: 'kubernetes' },
      { key: 'clusterVersion', value: '<version>', help: "the cluster's Kubernetes version (default: asked from its API)" },
      ...deorbitTuningFlags,
    ],
    fields,
    adminPort: null,
    check: (cfg) => (cfg.context ? undefined : '--context: name the kubeconfig context of the cluster to clean up; deorbit never acts on the current-context'),
    run: async (cfg, ctx) => {
      if (!cfg.context) throw new UsageError('--context: name the kubeconfig context of the cluster to clean up; deorbit never acts on the current-context');
      const clock = systemClock;
      const api = createKubeApi(loadContext(cfg.kubeconfig, cfg.context), { timeoutMs: 30_000 });
      const satellite = kubeDeorbitSatellite(api);
      const os = await openStackClientFor(cfg.osCloud, { env: process.env, cwd: process.cwd(), homeDir: homedir() }, { log: ctx.log, clock });
      const abort = new AbortController();
      ctx.shutdown.add('deorbit loop', () => abort.abort(new Error('interrupted')));
      const settings: DeorbitSettings = {
        pollIntervalMs: cfg.pollInterval,
        attemptTimeoutMs: cfg.attemptTimeout,
        hangTimeoutMs: cfg.timeout,
        apiUnavailableTimeoutMs: cfg.apiUnavailableTimeout,
        legacyServiceGraceMs: cfg.legacyServiceGrace,
        csiDrivers: cfg.csiDriver,
        maxDeletesPerPass: cfg.maxDeletesPerPass,
      };
      const version = cfg.clusterVersion ?? (await satellite.version().catch(() => undefined));
      const print = (line: string): void => void process.stdout.write(line + '\n');
      print(`${cfg.dryRun ? 'dry run of deorbit for' : 'deorbiting'} ${api.client.server} (context ${cfg.context}, Kubernetes ${version ?? 'version unknown'}), cloud ${cfg.osCloud ?? process.env.OS_CLOUD ?? 'from OS_* variables'}`);
      const result = await (cfg.dryRun ? runDeorbitDryRun : runDeorbitOnce)({
        ports: { satellite, cloud: openStackDeorbitCloud(os) },
        settings,
        target: { deletionStartedMs: clock.now(), version, loadBalancerClusterName: cfg.lbClusterName },
        clock,
        print,
        signal: abort.signal,
      }).catch((err: unknown) => {
        if (abort.signal.aborted) return { code: 1 as const };
        throw err;
      });
      return result.code;
    },
  });
}

/** The named context of the kubeconfig; a name it does not have is a usage error that lists those it has. */
function loadContext(path: string, context: string): KubeConfig {
  const kc = loadKubeConfig({ kind: 'file', path, context: undefined, flag: '--kubeconfig' });
  const names = kc.getContexts().map((c) => c.name);
  if (!names.includes(context)) throw new UsageError(`--context: ${path} has no context "${context}"; it has: ${names.join(', ') || 'none'}`);
  return loadKubeConfig({ kind: 'file', path, context, flag: '--kubeconfig' });
}
