// kubeward proxy: the composition root of the node-local L4 load balancer (flags and file → typed
// config → startProxy → admin routes and shutdown steps).
import type { Command } from 'commander';
import { availableParallelism } from 'node:os';
import { buildModeCommand, type DaemonHandle, type ModeContext, type ModeConfig, type ModeSpec } from './mode-command.ts';
import { UsageError, describeError } from '../base/errors.ts';
import { checkProxyConfig, DEFAULTS, proxyFields, resolveProxyConfig } from '../proxy/proxy-config.ts';
import { startProxy, type ProxyHandle, type StartProxyOptions } from '../proxy/start-proxy.ts';
import { watchConfigFile } from '../proxy/watch-config-file.ts';
import { followPrimary, WorkerPool } from '../proxy/proxy-workers.ts';

/** Set in the environment of the processes a primary forks (--workers): they serve, they do not fork. */
const WORKER_ENV = 'KUBEWARD_PROXY_WORKER';

const HELP = `
Forwards TCP (TLS stays end to end) from each listen address to a healthy upstream: least
connections across the process, a refused or timed-out connect retried on the next upstream inside
the same client connection, fail-open when every upstream is down, and the connections of a dead
or drained upstream closed spread over --drain-spread.

Examples:
  # worker node: 127.0.0.1:6443 and [::1]:6443 to three apiservers, /readyz verified against the CA
  kubeward proxy --listen 127.0.0.1:6443 --listen [::1]:6443 \\
    --upstream 10.0.0.11:6443 --upstream 10.0.0.12:6443 --upstream 10.0.0.13:6443 \\
    --ca-file /etc/kubernetes/pki/ca.crt

  # apiserver on 6443 and etcd on 2379 from one file (frontends: name, listen, upstreams,
  # healthCheck {type, path, caFile, clientCert, clientKey, ...}, connectTimeout, idleTimeout,
  # maxRetries, drainSpread, slowStart, rebalance*); top-level keys are defaults for every frontend
  kubeward proxy --config /etc/kubeward/proxy.yaml

Reload: SIGHUP (or a change of the --config file with --watch-config) re-reads the config and
applies it in place; established connections stay. A config that does not load is logged and the
running one stays. Log and admin settings are read at start only.

Admin (loopback only): POST /upstreams/<frontend>/<host:port>/drain and /undrain.
The frontend made from --listen/--upstream is named "default".`;

export const proxyMode: ModeSpec<typeof proxyFields> = {
  name: 'proxy',
  summary: 'node-local load balancer for kube-apiserver and etcd (127.0.0.1:6443 → healthy upstreams)',
  helpAfter: HELP,
  adminPort: 9452,
  fields: proxyFields,
  flags: [
    { key: 'listen', value: '<host:port>', repeatable: true, help: 'address to accept clients on; IPv6 in brackets', defaultText: DEFAULTS.listen },
    { key: 'upstream', value: '<host:port>', repeatable: true, help: 'an apiserver (or etcd member) to forward to' },
    { key: 'healthCheck', value: '<readyz|tls|tcp>', help: 'readyz: HTTPS GET of --health-path; tls: handshake only; tcp: connect only', defaultText: DEFAULTS.healthCheck },
    { key: 'healthPath', value: '<path>', help: 'path of the readyz check (/health for etcd)', defaultText: DEFAULTS.healthPath },
    { key: 'caFile', value: '<file>', help: 'CA bundle that upstream certificates must chain to (checks only; clients verify their own)' },
    { key: 'clientCert', value: '<file>', help: 'client certificate for checks (anonymous auth off, etcd)' },
    { key: 'clientKey', value: '<file>', help: 'key of --client-cert' },
    { key: 'tokenFile', value: '<file>', help: 'bearer token for checks, re-read on every check' },
    { key: 'insecureSkipTlsVerify', help: 'do not verify upstream certificates in checks' },
    { key: 'interval', value: '<duration>', help: 'time between checks of one upstream, jittered ±10%', defaultText: DEFAULTS.interval },
    { key: 'timeout', value: '<duration>', help: 'longest a check may take', defaultText: DEFAULTS.timeout },
    { key: 'rise', value: '<n>', help: 'consecutive good checks that bring a down upstream back', defaultText: String(DEFAULTS.rise) },
    { key: 'fall', value: '<n>', help: 'consecutive failed checks that take an upstream down', defaultText: String(DEFAULTS.fall) },
    { key: 'connectTimeout', value: '<duration>', help: 'TCP connect timeout; a timeout marks the upstream down and tries the next', defaultText: DEFAULTS.connectTimeout },
    { key: 'idleTimeout', value: '<duration>', help: 'close a connection after this long without a byte either way; 0 for never', defaultText: DEFAULTS.idleTimeout },
    { key: 'maxRetries', value: '<n>', help: 'further upstreams tried for one client connection after a failed connect', defaultText: 'each upstream once' },
    { key: 'drainSpread', value: '<duration>', help: 'window over which the connections of a dead or drained upstream are closed', defaultText: DEFAULTS.drainSpread },
    { key: 'slowStart', value: '<duration>', help: "how long a recovered upstream's share of new connections ramps up (from 10%); 0 for off", defaultText: DEFAULTS.slowStart },
    { key: 'rebalance', negatable: true, help: 'close the oldest connections of the busiest healthy upstream, one per --rebalance-interval, while connection counts differ by more than --rebalance-threshold', defaultText: 'on' },
    { key: 'rebalanceThreshold', value: '<n>', help: 'difference in connections between healthy upstreams that is left alone', defaultText: String(DEFAULTS.rebalanceThreshold) },
    { key: 'rebalanceInterval', value: '<duration>', help: 'at most one rebalancing close per interval per frontend, jittered ±50%', defaultText: DEFAULTS.rebalanceInterval },
    { key: 'rebalanceMinAge', value: '<duration>', help: 'connections younger than this are never closed for rebalancing', defaultText: DEFAULTS.rebalanceMinAge },
    { key: 'discovery', value: '<static|kubernetes>', help: 'kubernetes: follow the default/kubernetes EndpointSlices (or Endpoints), read through this proxy; the --upstream list stays as the last resort', defaultText: DEFAULTS.discovery },
    { key: 'kubeconfig', value: '<file>', help: 'credentials for --discovery kubernetes (its server is replaced by the listen address); default: the pod service account' },
    { key: 'discoveryDebounce', value: '<duration>', help: 'endpoint changes closer together than this are applied as one', defaultText: DEFAULTS.discoveryDebounce },
    { key: 'cacheFile', value: '<file>', help: 'the last good discovered list, written atomically and read at start before discovery', defaultText: DEFAULTS.cacheFile },
    { key: 'firstByteTimeout', value: '<duration>', help: "mark an upstream down at once when a connection's client has sent bytes and the upstream none within this long; 0 for off", defaultText: `${DEFAULTS.firstByteTimeout} with readyz or tls checks, off with tcp` },
    { key: 'maxConnections', value: '<n>', help: 'most client connections per frontend at once (1 to 1000000); the next is closed at accept. Also bounded by the fd limit less a reserve for checks', defaultText: 'from the fd limit' },
    { key: 'reusePort', help: 'listen with SO_REUSEPORT so several proxy processes share the listen addresses (Linux)' },
    { key: 'workers', value: '<n|auto>', help: 'processes serving the listen addresses (SO_REUSEPORT), this one included, each with its own checks; auto: one per CPU', defaultText: String(DEFAULTS.workers) },
    { key: 'watchConfig', help: 'reload when the --config file changes (as on SIGHUP)' },
    { key: 'shutdownGrace', value: '<duration>', help: 'on SIGTERM, how long open connections may finish', defaultText: DEFAULTS.shutdownGrace },
  ],
  check: (config) => checkProxyConfig(config),
  run: (config, ctx) => runProxyMode(config, ctx),
};

/** The proxy mode's run; kubeward agent passes hooks (the check results its watcher uses). */
export async function runProxyMode(config: ModeConfig<typeof proxyFields>, ctx: ModeContext<ModeConfig<typeof proxyFields>>, hooks: Pick<StartProxyOptions, 'onCheckResult'> = {}): Promise<DaemonHandle> {
  if (config.watchConfig && !ctx.configPath) throw new UsageError('--watch-config needs --config FILE to watch');
  const proxyConfig = resolveProxyConfig(config);
  const isWorker = process.env[WORKER_ENV] === '1';
  const processes = isWorker ? 1 : config.workers === 'auto' ? availableParallelism() : (config.workers ?? DEFAULTS.workers);
  let pool: WorkerPool | undefined;
  const proxy = await startProxy(proxyConfig, {
    log: ctx.log,
    registry: ctx.registry,
    reusePort: config.reusePort || processes > 1 || isWorker,
    onOperatorDrain: (frontend, upstream, drained) => pool?.broadcast({ kind: 'kubeward-proxy:drain', frontend, upstream, drained }),
    onCheckResult: hooks.onCheckResult,
  });
  const stopReloads = await enableReloads(proxy, config, ctx, () => pool?.broadcast({ kind: 'kubeward-proxy:reload' }));
  ctx.shutdown.add('proxy: stop reloading', stopReloads);
  if (isWorker) {
    const reload = (): void => void process.emit('SIGHUP', 'SIGHUP');
    ctx.shutdown.add('proxy: stop following the primary', followPrimary({ reload, drain: (f, u, d) => void proxy.setDrained(f, u, d) }));
  } else if (processes > 1) {
    // Workers get the same arguments; the admin listener stays with the primary, the port with all.
    const args = [...process.argv.slice(2), '--admin-address', 'off', '--workers', '1', '--reuse-port'];
    pool = new WorkerPool({ count: processes - 1, script: process.argv[1]!, args, execArgv: process.execArgv, env: { ...process.env, [WORKER_ENV]: '1' }, log: ctx.log });
    ctx.log.info({ workers: processes - 1, pids: pool.pids }, 'proxy workers started');
  }
  // The step's own bound is the grace plus time to close what is left.
  // Workers close in parallel with this process, each within its own grace.
  ctx.shutdown.add('proxy: stop accepting, let connections finish', () => Promise.all([proxy.close(), pool?.close()]).then(() => undefined), proxyConfig.shutdownGraceMs + 5000);
  const readiness = () => {
    const starting = pool?.starting ?? 0;
    return starting > 0 ? { ready: false, reason: `${starting} of ${processes - 1} proxy workers not listening yet` } : proxy.readiness();
  };
  return { readiness, status: () => proxy.status(), adminRoutes: proxy.adminRoutes };
}

export function proxyCommand(): Command {
  return buildModeCommand(proxyMode);
}

type ProxyModeConfig = ModeConfig<typeof proxyFields>;

/** SIGHUP, and with --watch-config a change of the file, reload the config; returns the undo. */
async function enableReloads(proxy: ProxyHandle, config: ProxyModeConfig, ctx: ModeContext<ProxyModeConfig>, tellWorkers: () => void): Promise<() => void> {
  const { log } = ctx;
  const reload = async (trigger: string): Promise<void> => {
    try {
      const next = resolveProxyConfig(await ctx.reloadConfig!());
      const summary = await proxy.reload(next);
      log.info({ trigger, frontends: summary }, 'config reloaded; established connections kept');
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
