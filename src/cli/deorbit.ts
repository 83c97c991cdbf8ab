// kubeward deorbit: the composition root of single-cluster deorbit. Cleans up one cluster's
// LoadBalancer Services, Cinder-backed claims and VolumeSnapshots, waits until Octavia and Cinder
// show them gone, prints progress, and exits 0 when clean or 1 on timeout with the leftovers.
// It never acts on a kubeconfig's current-context: the context is named on the command line.
// --dry-run runs the same decision once and prints what would be deleted and waited for.
// Settings: src/controllers/deorbit/deorbit-config.ts.
import { homedir } from 'node:os';
import { systemClock } from '../base/clock.ts';
import { UsageError } from '../base/errors.ts';
import { createKubeApi } from '../clients/kube/kube-api.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig } from '../clients/kube/load-kube-config.ts';
import { openStackClientFor } from '../clients/openstack/create-openstack-client.ts';
import { openStackDeorbitCloud } from '../controllers/deorbit/deorbit-cloud.ts';
import { runDeorbitDryRun, runDeorbitOnce } from '../controllers/deorbit/deorbit-once.ts';
import { kubeDeorbitSatellite } from '../controllers/deorbit/deorbit-satellite.ts';
import type { DeorbitSettings } from '../controllers/deorbit/deorbit-types.ts';
import { deorbitDeclaration } from '../controllers/deorbit/deorbit-config.ts';
import { buildModeCommand } from './mode-command.ts';

/** For kubeward operator, which takes the timing flags with a deorbit prefix. */
export { deorbitTuningFields, deorbitTuningFlags } from '../controllers/deorbit/deorbit-config.ts';

export function deorbitCommand() {
  return buildModeCommand({
    ...deorbitDeclaration,
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
      print(
        `${cfg.dryRun ? 'dry run of deorbit for' : 'deorbiting'} ${api.client.server} (context ${cfg.context}, Kubernetes ${version ?? 'version unknown'}), cloud ${cfg.osCloud ?? process.env.OS_CLOUD ?? 'from OS_* variables'}`,
      );
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
