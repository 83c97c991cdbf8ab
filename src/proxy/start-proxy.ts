// Starts a proxy in-process from a typed config: the entry point for the CLI mode and for callers
// such as the demo. Returns a handle with readiness, status, stats, admin routes and close().
import { networkInterfaces } from 'node:os';
import { Registry } from '../admin/metrics.ts';
import { systemClock, type Clock } from '../base/clock.ts';
import { createSilentLogger, type Logger } from '../base/logger.ts';
import { once } from '../base/lifecycle.ts';
import { KubewardError, describeError } from '../base/errors.ts';
import type { AdminRoute, Readiness } from '../admin/admin-server.ts';
import { formatHostPort, type HostPort } from '../config/fields.ts';
import { Frontend } from './frontend.ts';
import { proxyAdminRoutes } from './proxy-admin-routes.ts';
import { loadHealthCheck, type LoadedHealthCheck, type ProxyConfig } from './proxy-config.ts';
import { ProxyMetrics } from './proxy-metrics.ts';
import { ReadBufferPool } from './read-buffer-pool.ts';
import { countOpenFds, planConnectionCaps, readFdLimit } from './fd-budget.ts';
import { ADMIN_MAX_CONNECTIONS } from '../admin/admin-server.ts';
import type { KubernetesDiscovery } from './kubernetes-discovery.ts';
import type { ProbeResult } from '../probe/probe-result.ts';
import { readUpstreamCache, writeUpstreamCache } from './upstream-cache.ts';
import { proxyReadiness, proxyStats, proxyStatus, type FrontendStats, type FrontendView } from './proxy-status.ts';

export interface StartProxyOptions {
  log?: Logger;
  /** The process registry; a private one when absent (in-process callers that do not scrape). */
  registry?: Registry;
  clock?: Clock;
  random?: () => number;
  /** Listen with SO_REUSEPORT, so several proxy processes can share the listen addresses (Linux). */
  reusePort?: boolean;
  /** Called after an operator drain or undrain through the admin routes succeeded (workers follow it). */
  onOperatorDrain?: (frontend: string, upstream: string, drained: boolean) => void;
  /** Largest read per socket (bytes); default 64 KiB. */
  readBufferBytes?: number;
  /** The file descriptor limit the connection caps are derived from; default: the process's; null: none. */
  fdLimit?: number | null;
  /** Every health check result, after the proxy applied it (kubeward agent: the watcher's verdicts). */
  onCheckResult?: (frontend: string, upstream: string, result: ProbeResult) => void;
}

export interface ReloadSummary {
  added: string[];
  removed: string[];
  updated: string[];
}

export interface ProxyHandle {
  /** Bound listen addresses by frontend name (port 0 resolved). */
  readonly addresses: ReadonlyMap<string, readonly HostPort[]>;
  readiness(): Readiness;
  status(): ReturnType<typeof proxyStatus>;
  stats(): FrontendStats[];
  readonly adminRoutes: AdminRoute[];
  setDrained(frontend: string, upstream: string, drained: boolean): { closing: number } | 'no-frontend' | 'no-upstream';
  /**
   * Applies a new config in place, without dropping established connections: frontends are added,
   * updated (listen addresses, upstreams, checks, timeouts) or retired (they stop accepting and
   * their connections end by themselves). All or nothing: a config whose files cannot be read or
   * whose new addresses cannot be bound is rejected (UsageError) and the running one stays.
   * Reloads run one at a time.
   */
  reload(config: ProxyConfig): Promise<ReloadSummary>;
  /** Graceful: stop accepting, let connections finish for up to shutdownGrace, close the rest. Idempotent. */
  close(): Promise<void>;
  /** Abortive: everything now. */
  destroy(): void;
}

export async function startProxy(config: ProxyConfig, opts: StartProxyOptions = {}): Promise<ProxyHandle> {
  const log = opts.log ?? createSilentLogger();
  let current = config;
  let frontends: Frontend[] = [];
  /** Frontends removed by a reload whose connections have not all ended yet. */
  let retired: Frontend[] = [];
  const metrics = new ProxyMetrics(opts.registry ?? new Registry(), () => frontends.map((f) => f.sample()));
  const local = localHostTest();
  const deps = { log, metrics, clock: opts.clock ?? systemClock, random: opts.random ?? Math.random, isLocal: local, reusePort: opts.reusePort, onCheckResult: opts.onCheckResult, buffers: new ReadBufferPool({ sliceBytes: opts.readBufferBytes }) };
  const discoveries = new Map<string, { d: KubernetesDiscovery; key: string }>();
  const startFrontend = async (fc: ProxyConfig['frontends'][number], check: LoadedHealthCheck): Promise<Frontend> => {
    const cached = fc.discovery ? await loadCachedList(fc.name, fc.discovery.cacheFile, log) : undefined;
    const f = new Frontend(fc, check, deps, cached);
    try {
      await f.start();
    } catch (err) {
      f.destroy();
      throw err;
    }
    log.info({ frontend: f.name, listen: f.addresses.map(formatHostPort), upstreams: f.list.all().map((u) => u.key), check: fc.healthCheck.type, fromCache: cached !== undefined }, 'frontend listening');
    return f;
  };
  /** Writes the discovered lists of every frontend that shares this cache file. */
  const saveCache = async (path: string): Promise<void> => {
    const lists = new Map<string, readonly HostPort[]>();
    for (const f of frontends) if (f.config.discovery?.cacheFile === path && f.discovered) lists.set(f.name, f.discovered);
    await writeUpstreamCache(path, lists).catch((err: unknown) => log.warn({ cacheFile: path, err: describeError(err) }, 'cannot write the upstream cache file; discovery goes on'));
  };
  /** Starts, restarts or stops each frontend's discovery to match its config. */
  const syncDiscoveries = async (): Promise<void> => {
    for (const [name, { d, key }] of discoveries) {
      const f = frontends.find((x) => x.name === name);
      if (f && JSON.stringify(f.config.discovery) === key) continue;
      discoveries.delete(name);
      await d.stop();
    }
    for (const f of frontends) {
      const dc = f.config.discovery;
      if (!dc || discoveries.has(f.name)) continue;
      // Loaded on first use: the Kubernetes client costs tens of MB that a static proxy never needs.
      const { KubernetesDiscovery } = await import('./kubernetes-discovery.ts');
      const d = new KubernetesDiscovery({
        frontend: f.name,
        config: dc,
        server: f.addresses[0]!,
        clock: deps.clock,
        log,
        onList: (list) => {
          const diff = f.setDiscovered(list);
          log.info({ frontend: f.name, upstreams: list.map(formatHostPort), ...diff }, 'discovery: new upstream list applied');
          void saveCache(dc.cacheFile);
        },
      });
      if (f.discovered) d.seed(f.discovered);
      discoveries.set(f.name, { d, key: JSON.stringify(dc) });
      d.start();
    }
  };
  const stopDiscoveries = async (): Promise<void> => {
    const all = [...discoveries.values()];
    discoveries.clear();
    await Promise.all(all.map((x) => x.d.stop()));
  };
  try {
    for (const fc of config.frontends) frontends.push(await startFrontend(fc, await loadHealthCheck(fc)));
  } catch (err) {
    for (const f of frontends) f.destroy();
    throw err;
  }
  // Measured once the listeners are open: what the process holds before any client arrives.
  const fdLimit = opts.fdLimit === undefined ? readFdLimit() : (opts.fdLimit ?? undefined);
  const fdsAtStart = countOpenFds();
  const applyCaps = (): void => {
    const caps = planConnectionCaps({
      fdLimit,
      fdsInUse: fdsAtStart,
      adminConnections: ADMIN_MAX_CONNECTIONS,
      frontends: frontends.map((f) => ({ name: f.name, maxConnections: f.config.maxConnections, upstreams: f.list.all().length })),
    });
    for (const f of frontends) {
      const c = caps.get(f.name)!;
      if (c.cap === f.connectionCap) continue;
      f.setConnectionCap(c.cap);
      if (c.source !== 'none') log.info({ frontend: f.name, maxConnections: c.cap, from: c.source, fdLimit, fdsAtStart }, 'connection cap set');
    }
  };
  applyCaps();
  await syncDiscoveries();
  const views = (): FrontendView[] =>
    frontends.map((f) => ({
      name: f.name,
      listen: f.addresses,
      counters: f.counters,
      upstreams: f.list.all(),
      localFault: f.localFault,
      connectionCap: f.connectionCap,
      openConnections: f.sample().openConnections,
      discovery: discoveries.get(f.name)?.d.status,
      connections: (key) => {
        const b = f.conns.bytesFor(key);
        return { established: f.conns.countFor(key), total: f.conns.totalFor(key), bytesToUpstream: b.toUpstream, bytesToClient: b.toClient };
      },
    }));
  const setDrained: ProxyHandle['setDrained'] = (name, upstream, drained) => {
    const f = frontends.find((x) => x.name === name);
    if (!f) return 'no-frontend';
    return f.setDrained(upstream, drained) ?? 'no-upstream';
  };
  const reloadNow = async (next: ProxyConfig): Promise<ReloadSummary> => {
    // Prepare: everything that can fail, before anything changes.
    const checks = await Promise.all(next.frontends.map((fc) => loadHealthCheck(fc)));
    const undo: (() => void)[] = [];
    const started: Frontend[] = [];
    try {
      for (const [i, fc] of next.frontends.entries()) {
        const f = frontends.find((x) => x.name === fc.name);
        if (f) undo.push(await f.openAddedListeners(fc));
        else started.push(await startFrontend(fc, checks[i]!));
      }
    } catch (err) {
      for (const u of undo) u();
      for (const f of started) f.destroy();
      throw err;
    }
    // Commit: nothing below can fail.
    const summary: ReloadSummary = { added: started.map((f) => f.name), removed: [], updated: [] };
    const nextFrontends = next.frontends.map((fc, i) => {
      const f = frontends.find((x) => x.name === fc.name);
      if (!f) return started.find((x) => x.name === fc.name)!;
      f.update(fc, checks[i]!);
      summary.updated.push(f.name);
      return f;
    });
    for (const f of frontends) {
      if (nextFrontends.includes(f)) continue;
      f.retire();
      retired.push(f);
      summary.removed.push(f.name);
    }
    retired = retired.filter((f) => f.conns.size > 0);
    frontends = nextFrontends;
    current = next;
    applyCaps();
    await syncDiscoveries();
    return summary;
  };
  let reloading: Promise<unknown> = Promise.resolve();
  const reload = (next: ProxyConfig): Promise<ReloadSummary> => {
    const run = reloading.then(() => reloadNow(next));
    reloading = run.catch(() => undefined);
    return run.catch((err: unknown) => {
      throw err instanceof KubewardError ? err : new KubewardError('E_CONFIG', `reload failed: ${describeError(err)}`, { cause: err });
    });
  };
  return {
    get addresses() {
      return new Map(frontends.map((f) => [f.name, f.addresses]));
    },
    readiness: () => proxyReadiness(views()),
    status: () => proxyStatus(views(), formatHostPort),
    stats: () => proxyStats(views()),
    adminRoutes: proxyAdminRoutes((name, upstream, drained) => {
      const r = setDrained(name, upstream, drained);
      if (typeof r === 'object') opts.onOperatorDrain?.(name, upstream, drained);
      return r;
    }),
    setDrained,
    reload,
    close: once(async () => {
      log.info({ graceMs: current.shutdownGraceMs }, 'proxy closing: no new connections, waiting for open ones');
      await stopDiscoveries();
      await Promise.all([...frontends, ...retired].map((f) => f.close(current.shutdownGraceMs)));
    }),
    destroy: () => {
      void stopDiscoveries();
      for (const f of [...frontends, ...retired]) f.destroy();
    },
  };
}

/** The cached list of one frontend, or undefined; a corrupt or foreign file is reported, never fatal. */
async function loadCachedList(frontend: string, path: string, log: Logger): Promise<HostPort[] | undefined> {
  const r = await readUpstreamCache(path);
  if (!r.ok) {
    if (r.missing) log.info({ frontend, cacheFile: path }, 'no upstream cache file yet: starting from the configured upstreams');
    else log.warn({ frontend, cacheFile: path, problem: r.problem }, 'upstream cache file ignored: starting from the configured upstreams');
    return undefined;
  }
  const list = r.lists.get(frontend);
  if (list) log.info({ frontend, cacheFile: path, upstreams: list.map(formatHostPort) }, 'upstreams loaded from the cache file, before discovery');
  return list;
}

/** Loopback, localhost, or an address of one of this node's interfaces (read once at start). */
function localHostTest(): (host: string) => boolean {
  const own = new Set(Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address)));
  return (host) => host === 'localhost' || host.startsWith('127.') || host === '::1' || own.has(host);
}
