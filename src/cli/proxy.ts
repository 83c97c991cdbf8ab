// kubeward proxy: the composition root of the node-local L4 load balancer (flags and file → typed
// config (src/proxy/proxy-config.ts) → startProxy → admin routes and shutdown steps).
import type { Command } from 'commander';
import { availableParallelism } from 'node:os';
import { buildModeCommand, type DaemonHandle, type ModeContext, type ModeConfig, type ModeSpec } from './mode-command.ts';
import { UsageError, describeError } from '../base/errors.ts';
import { DEFAULTS, proxyDeclaration, resolveProxyConfig, type proxyFields } from '../proxy/proxy-config.ts';
import { startProxy, type KubewardProxy, type ProxyHandle, type StartProxyOptions } from '../proxy/start-proxy.ts';
import { watchConfigFile } from '../proxy/watch-config-file.ts';
import { checkProxyFiles } from './check-proxy-files.ts';
import { followPrimary, WorkerPool, type FollowingPrimary } from '../proxy/proxy-workers.ts';
import { NativeAddon } from '../proxy/relay/native-addon.ts';
import { addonCandidates, NativeRelayLoader } from '../proxy/relay/native-relay.ts';

/** Set in the environment of the processes a primary forks (--workers): they serve, they do not fork. */
const WORKER_ENV = 'KUBEWARD_PROXY_WORKER';

export const proxyMode: ModeSpec<typeof proxyFields> = { ...proxyDeclaration, run: (config, ctx) => runProxyMode(config, ctx), checkFiles: checkProxyFiles };

/** The proxy mode's run; kubeward agent passes hooks (the check results its watcher uses). */
export async function runProxyMode(
  config: ModeConfig<typeof proxyFields>,
  ctx: ModeContext<ModeConfig<typeof proxyFields>>,
  hooks: Pick<StartProxyOptions, 'onCheckResult'> = {},
): Promise<DaemonHandle> {
  if (config.watchConfig && !ctx.configPath) throw new UsageError('--watch-config needs --config FILE to watch');
  const proxyConfig = resolveProxyConfig(config);
  const isWorker = process.env[WORKER_ENV] === '1';
  const processes = isWorker ? 1 : config.workers === 'auto' ? availableParallelism() : (config.workers ?? DEFAULTS.workers);
  // How workers get their connections (read at start: a reload does not change it).
  const byPrimary = (config.workerAccept ?? DEFAULTS.workerAccept) === 'primary';
  const shared = processes > 1 || isWorker;
  // A mode runs once per process: its context's addon is the process's one load (KUBEWARD_NATIVE_RELAY: a sanitizer build).
  const addon = ctx.nativeAddon ?? new NativeAddon(addonCandidates(process.env.KUBEWARD_NATIVE_RELAY || undefined));
  let pool: WorkerPool | undefined;
  // A worker's side of the channel, once its proxy runs (connections arrive only after it said ready).
  let primary: FollowingPrimary | undefined;
  const proxy: KubewardProxy = await startProxy(proxyConfig, {
    log: ctx.log,
    registry: ctx.registry,
    reusePort: config.reusePort || (shared && !byPrimary),
    handover: ctx.handover,
    // --worker-accept reuseport (the default): every process listens and accepts its own. primary:
    // the primary alone listens and hands connections out (proxy-workers.ts); a worker opens none.
    handOff:
      processes > 1 && byPrimary
        ? (frontend, client) => pool?.handOff(frontend, client, proxy.openConnections, (c) => proxy.adopt(frontend, c)) ?? false
        : undefined,
    fromPrimary: isWorker && byPrimary,
    onConnectionClosed: isWorker && byPrimary ? () => primary?.closed() : undefined,
    onOperatorDrain: (frontend, upstream, drained) => pool?.broadcast({ kind: 'kubeward-proxy:drain', frontend, upstream, drained }),
    onCheckResult: hooks.onCheckResult,
    relay: config.relay,
    nativeRelay: new NativeRelayLoader(addon),
    trimMalloc: addon.mallocTrim(),
  });
  const stopReloads = await enableReloads(
    proxy,
    config,
    ctx,
    () => pool?.broadcast({ kind: 'kubeward-proxy:reload' }),
    () => primary?.ready(),
  );
  ctx.shutdown.add('proxy: stop reloading', stopReloads);
  if (isWorker) {
    const reload = (): void => void process.emit('SIGHUP', 'SIGHUP');
    primary = followPrimary({
      reload,
      drain: (f, u, d) => void proxy.setDrained(f, u, d),
      connection: (f, client) => proxy.adopt(f, client),
      open: () => proxy.openConnections,
      frontends: () => proxy.frontendNames,
    });
    const following = primary;
    ctx.shutdown.add('proxy: stop following the primary', () => following.stop());
    primary.ready();
  } else if (processes > 1) {
    // Workers get the same arguments; the admin and metrics listeners stay with the primary, and so
    // do the listen addresses unless every process listens (--worker-accept reuseport).
    const args = [...process.argv.slice(2), '--admin-address', 'off', '--metrics-address', 'off', '--workers', '1', ...(byPrimary ? [] : ['--reuse-port'])];
    pool = new WorkerPool({
      count: processes - 1,
      script: process.argv[1]!,
      args,
      execArgv: process.execArgv,
      env: { ...process.env, [WORKER_ENV]: '1' },
      log: ctx.log,
    });
    ctx.log.info({ workers: processes - 1, pids: pool.pids }, 'proxy workers started');
  }
  // The step's own bound is the grace plus time to close what is left.
  // Workers close in parallel with this process, each within its own grace.
  ctx.shutdown.add(
    'proxy: stop accepting, let connections finish',
    () => Promise.all([proxy.close(), pool?.close()]).then(() => undefined),
    proxyConfig.shutdownGraceMs + 5000,
  );
  const readiness = () => {
    const starting = pool?.starting ?? 0;
    return starting > 0 ? { ready: false, reason: `${starting} of ${processes - 1} proxy workers not listening yet` } : proxy.readiness();
  };
  return { readiness, status: () => proxy.status(), adminRoutes: proxy.adminRoutes, relay: () => proxy.relayPath };
}

export function proxyCommand(): Command {
  return buildModeCommand(proxyMode);
}

type ProxyModeConfig = ModeConfig<typeof proxyFields>;

/** SIGHUP, and with --watch-config a change of the file, reload the config; returns the undo. */
async function enableReloads(
  proxy: ProxyHandle,
  config: ProxyModeConfig,
  ctx: ModeContext<ProxyModeConfig>,
  tellWorkers: () => void,
  reloaded: () => void,
): Promise<() => void> {
  const { log } = ctx;
  const reload = async (trigger: string): Promise<void> => {
    try {
      const next = resolveProxyConfig(await ctx.reloadConfig!());
      const summary = await proxy.reload(next);
      log.info({ trigger, frontends: summary }, 'config reloaded; established connections kept');
      reloaded();
    } catch (err) {
      log.error({ trigger, err: describeError(err) }, 'config reload rejected; the running config stays');
    }
  };
  const onHup = (): void => {
    tellWorkers();
    void reload('SIGHUP');
  };
  process.on('SIGHUP', onHup);
  const watcher = config.watchConfig && ctx.configPath ? await watchConfigFile(ctx.configPath, () => void reload('config file changed')) : undefined;
  return () => {
    process.off('SIGHUP', onHup);
    watcher?.close();
  };
}
