// Starts a proxy in-process from a typed config: the entry point for the CLI mode and for callers
// such as the demo. Resolves to a KubewardProxy: readiness, status, stats, admin routes, reload, close() and destroy().
import type { ListenerHandover } from '../handover/handover-session.ts';
import { networkInterfaces } from 'node:os';
import { Registry } from '../admin/metrics.ts';
import { systemClock, type Clock } from '../base/clock.ts';
import { createSilentLogger, type Logger } from '../base/logger.ts';
import { once } from '../base/lifecycle.ts';
import { KubewardError, describeError } from '../base/errors.ts';
import type { AdminRoute, Readiness } from '../admin/admin-server.ts';
import type { AcceptedHandle } from './adopt-socket.ts';
import { formatHostPort, type HostPort } from '../config/fields.ts';
import { Frontend, type FrontendDeps } from './frontend.ts';
import { proxyAdminRoutes } from './proxy-admin-routes.ts';
import { loadHealthCheck, type LoadedHealthCheck, type ProxyConfig } from './proxy-config.ts';
import { ProxyMetrics } from './proxy-metrics.ts';
import { chooseRelay } from './relay/choose-relay.ts';
import type { loadRelayInternals } from './relay/handle-internals.ts';
import type { NativeRelaySource } from './relay/native-relay.ts';
import { ReadBufferPool } from './relay/read-buffer-pool.ts';
import type { RelayPath } from './relay/relay.ts';
import { countOpenFds, planConnectionCaps, readFdLimit } from './fd-budget.ts';
import { ADMIN_MAX_CONNECTIONS } from '../admin/admin-server.ts';
import type { KubernetesDiscovery } from './kubernetes-discovery.ts';
import { DnsRefresher, systemLookup, type Lookup } from './dns-refresher.ts';
import { planTrim, type TrimState } from './plan-memory-trim.ts';
import { giveBackMemory } from '../base/give-back-memory.ts';

/** How often the proxy looks whether the load has passed (plan-memory-trim.ts). */
const TRIM_INTERVAL_MS = 10_000;
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
  /** --handover-socket: listeners taken from the predecessor and offered to the successor. */
  handover?: ListenerHandover;
  /**
   * --workers, in the primary: offered every accepted connection first; true when it handed the
   * connection to a worker (proxy-workers.ts), false to serve it here.
   */
  handOff?: (frontend: string, client: AcceptedHandle) => boolean;
  /** --workers, in a worker: open no listener; connections arrive through adopt(). */
  fromPrimary?: boolean;
  /** Told after each client connection of this process ends. */
  onConnectionClosed?: () => void;
  /** Called after an operator drain or undrain through the admin routes succeeded (workers follow it). */
  onOperatorDrain?: (frontend: string, upstream: string, drained: boolean) => void;
  /** Largest read per socket (bytes); default 64 KiB. */
  readBufferBytes?: number;
  /** The file descriptor limit the connection caps are derived from; default: the process's; null: none. */
  fdLimit?: number | null;
  /** Every health check result, after the proxy applied it (kubeward agent: the watcher's verdicts). */
  onCheckResult?: (frontend: string, upstream: string, result: ProbeResult) => void;
  /** The data path asked for (--relay); default native, which falls back to handle without the addon, and handle to socket when Node's internals do not fit. */
  relay?: RelayPath;
  /** Finds the handle path's internals (tests inject a failing one); default loadRelayInternals. */
  loadRelayInternals?: () => ReturnType<typeof loadRelayInternals>;
  /**
   * The process's native relay for --relay native: the NativeRelayLoader the process's owner made
   * (one per process; tests inject failing ones). Without it the native path cannot run here and
   * the proxy relays on the handle path.
   */
  nativeRelay?: NativeRelaySource;
  /** Resolves --upstream-dns names (tests inject one); default the system resolver. */
  lookup?: Lookup;
  /**
   * The process's malloc_trim (NativeAddon.mallocTrim()), whatever the data path: the give-back
   * after a load calls it. Without it that give-back collects V8's heap only.
   */
  trimMalloc?: () => boolean;
  /** How often the proxy looks whether a load has passed; default 10 s (tests shorten it). */
  trimIntervalMs?: number;
}

/** /status: the data path this process runs, then the frontends. */
export type ProxyStatus = { relay: RelayPath } & ReturnType<typeof proxyStatus>;

export interface ReloadSummary {
  added: string[];
  removed: string[];
  updated: string[];
}

export interface ProxyHandle {
  /** Bound listen addresses by frontend name (port 0 resolved). */
  readonly addresses: ReadonlyMap<string, readonly HostPort[]>;
  readiness(): Readiness;
  status(): ProxyStatus;
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

/** Starts a proxy: the frontends listen and their health checks and discoveries run when it resolves. */
export function startProxy(config: ProxyConfig, opts: StartProxyOptions = {}): Promise<KubewardProxy> {
  return KubewardProxy.start(config, opts);
}

/**
 * A running proxy: its frontends (and those a reload retired whose connections are still open), their
 * discoveries and the connection caps. close() is graceful and idempotent, destroy() abortive, as
 * docs/architecture.md's "Close vs destroy" says. (Not named `Proxy`: that would shadow the global.)
 */
export class KubewardProxy implements ProxyHandle {
  readonly adminRoutes: AdminRoute[];
  readonly #opts: StartProxyOptions;
  readonly #log: Logger;
  readonly #deps: FrontendDeps;
  #current: ProxyConfig;
  #frontends: Frontend[] = [];
  /** Frontends removed by a reload whose connections have not all ended yet. */
  #retired: Frontend[] = [];
  readonly #discoveries = new Map<string, { d: KubernetesDiscovery; key: string }>();
  readonly #dns = new Map<string, { r: DnsRefresher; key: string }>();
  #trimTimer: NodeJS.Timeout | undefined;
  #fdLimit: number | undefined;
  #fdsAtStart = 0;
  #reloading: Promise<unknown> = Promise.resolve();

  static async start(config: ProxyConfig, opts: StartProxyOptions = {}): Promise<KubewardProxy> {
    const p = new KubewardProxy(config, opts);
    try {
      for (const fc of config.frontends) p.#frontends.push(await p.#startFrontend(fc, await loadHealthCheck(fc)));
    } catch (err) {
      for (const f of p.#frontends) f.destroy();
      throw err;
    }
    // Measured once the listeners are open: what the process holds before any client arrives.
    p.#fdLimit = opts.fdLimit === undefined ? readFdLimit() : (opts.fdLimit ?? undefined);
    p.#fdsAtStart = countOpenFds();
    p.#applyCaps();
    await p.#syncDiscoveries();
    p.#startMemoryTrim();
    return p;
  }

  /** Every TRIM_INTERVAL_MS: the first quiet interval after a busy one gives the load's memory back (plan-memory-trim.ts, base/give-back-memory.ts). */
  #startMemoryTrim(): void {
    const trimMalloc = this.#opts.trimMalloc;
    let state: TrimState = { accepted: 0, busySinceTrim: false };
    this.#trimTimer = setInterval(() => {
      const accepted = this.#frontends.reduce((n, f) => n + f.counters.accepted, 0);
      const plan = planTrim(state, accepted);
      state = plan.next;
      if (!plan.trim) return;
      const rssBefore = process.memoryUsage.rss();
      const r = giveBackMemory(trimMalloc);
      this.#log.debug({ ...r, rssBefore, rssAfter: process.memoryUsage.rss() }, 'the load has passed: memory given back');
    }, this.#opts.trimIntervalMs ?? TRIM_INTERVAL_MS);
    this.#trimTimer.unref();
  }

  private constructor(config: ProxyConfig, opts: StartProxyOptions) {
    this.#opts = opts;
    this.#log = opts.log ?? createSilentLogger();
    this.#current = config;
    const metrics = new ProxyMetrics(opts.registry ?? new Registry(), () => this.#frontends.map((f) => f.sample()));
    const readBytes = opts.readBufferBytes ?? 64 * 1024;
    const native = opts.nativeRelay ?? { load: () => ({ unusable: 'no native relay was handed to this proxy (its process makes one NativeRelayLoader)' }) };
    const relay = chooseRelay(opts.relay ?? 'native', {
      log: this.#log,
      buffers: new ReadBufferPool({ sliceBytes: opts.readBufferBytes }),
      loadInternals: opts.loadRelayInternals,
      loadNative: () => native.load(readBytes),
    });
    this.#deps = {
      log: this.#log,
      metrics,
      clock: opts.clock ?? systemClock,
      random: opts.random ?? Math.random,
      isLocal: localHostTest(),
      reusePort: opts.reusePort,
      handover: opts.handover,
      handOff: opts.handOff,
      fromPrimary: opts.fromPrimary,
      onConnectionClosed: opts.onConnectionClosed,
      onCheckResult: opts.onCheckResult,
      relay,
    };
    metrics.relayPath.set({ path: this.relayPath }, 1);
    this.adminRoutes = proxyAdminRoutes((name, upstream, drained) => {
      const r = this.setDrained(name, upstream, drained);
      if (typeof r === 'object') this.#opts.onOperatorDrain?.(name, upstream, drained);
      return r;
    });
  }

  get addresses(): ReadonlyMap<string, readonly HostPort[]> {
    return new Map(this.#frontends.map((f) => [f.name, f.addresses]));
  }

  readiness(): Readiness {
    return proxyReadiness(this.#views());
  }

  status(): ProxyStatus {
    return { relay: this.relayPath, ...proxyStatus(this.#views(), formatHostPort) };
  }

  /** The data path this process runs (see chooseRelay). */
  get relayPath(): RelayPath {
    return this.#deps.relay.path;
  }

  /** Client connections open in this process, over every frontend (retired ones too). */
  get openConnections(): number {
    let n = 0;
    for (const f of this.#frontends) n += f.openConnections;
    for (const f of this.#retired) n += f.openConnections;
    return n;
  }

  /** The frontends this process serves, by name. */
  get frontendNames(): string[] {
    return this.#frontends.map((f) => f.name);
  }

  /**
   * Serves a connection another process accepted (a worker's, handed over by the primary); false,
   * with the connection closed, when no frontend has that name (any more: a reload raced it).
   */
  adopt(frontend: string, client: AcceptedHandle): boolean {
    const f = this.#frontends.find((x) => x.name === frontend);
    if (!f) {
      client.close();
      return false;
    }
    f.adopt(client);
    return true;
  }

  stats(): FrontendStats[] {
    return proxyStats(this.#views());
  }

  setDrained(name: string, upstream: string, drained: boolean): { closing: number } | 'no-frontend' | 'no-upstream' {
    const f = this.#frontends.find((x) => x.name === name);
    if (!f) return 'no-frontend';
    return f.setDrained(upstream, drained) ?? 'no-upstream';
  }

  reload(next: ProxyConfig): Promise<ReloadSummary> {
    const run = this.#reloading.then(() => this.#reloadNow(next));
    this.#reloading = run.catch(() => undefined);
    return run.catch((err: unknown) => {
      throw err instanceof KubewardError ? err : new KubewardError('E_CONFIG', `reload failed: ${describeError(err)}`, { cause: err });
    });
  }

  readonly close = once(async () => {
    clearInterval(this.#trimTimer);
    this.#log.info({ graceMs: this.#current.shutdownGraceMs }, 'proxy closing: no new connections, waiting for open ones');
    this.#stopDns();
    await this.#stopDiscoveries();
    await Promise.all([...this.#frontends, ...this.#retired].map((f) => f.close(this.#current.shutdownGraceMs)));
  });

  destroy(): void {
    clearInterval(this.#trimTimer);
    this.#stopDns();
    void this.#stopDiscoveries();
    for (const f of [...this.#frontends, ...this.#retired]) f.destroy();
  }

  async #startFrontend(fc: ProxyConfig['frontends'][number], check: LoadedHealthCheck): Promise<Frontend> {
    const cached = fc.discovery ? await loadCachedList(fc.name, fc.discovery.cacheFile, this.#log) : undefined;
    const f = new Frontend(fc, check, this.#deps, cached);
    try {
      // The names' first answer is part of the frontend's first upstream list.
      if (fc.upstreamDns?.length) await this.#startDns(f);
      await f.start();
    } catch (err) {
      this.#dns.get(fc.name)?.r.close();
      this.#dns.delete(fc.name);
      f.destroy();
      throw err;
    }
    this.#log.info(
      {
        frontend: f.name,
        listen: f.addresses.map(formatHostPort),
        upstreams: f.list.all().map((u) => u.key),
        check: fc.healthCheck.type,
        fromCache: cached !== undefined,
      },
      this.#opts.fromPrimary ? 'frontend serving the connections the primary hands over' : 'frontend listening',
    );
    return f;
  }

  /** Writes the discovered lists of every frontend that shares this cache file. */
  async #saveCache(path: string): Promise<void> {
    const lists = new Map<string, readonly HostPort[]>();
    for (const f of this.#frontends) if (f.config.discovery?.cacheFile === path && f.discovered) lists.set(f.name, f.discovered);
    await writeUpstreamCache(path, lists).catch((err: unknown) =>
      this.#log.warn({ cacheFile: path, err: describeError(err) }, 'cannot write the upstream cache file; discovery goes on'),
    );
  }

  /** Starts, restarts or stops each frontend's discovery to match its config. */
  async #syncDiscoveries(): Promise<void> {
    const log = this.#log;
    for (const [name, { d, key }] of this.#discoveries) {
      const f = this.#frontends.find((x) => x.name === name);
      if (f && JSON.stringify(f.config.discovery) === key) continue;
      this.#discoveries.delete(name);
      await d.close();
    }
    for (const f of this.#frontends) {
      const dc = f.config.discovery;
      if (!dc || this.#discoveries.has(f.name)) continue;
      // Loaded on first use: the Kubernetes client costs tens of MB that a static proxy never needs.
      const { KubernetesDiscovery } = await import('./kubernetes-discovery.ts');
      const d = new KubernetesDiscovery({
        frontend: f.name,
        config: dc,
        server: f.addresses[0]!,
        clock: this.#deps.clock,
        log,
        onList: (list) => {
          const diff = f.setDiscovered(list);
          log.info({ frontend: f.name, upstreams: list.map(formatHostPort), ...diff }, 'discovery: new upstream list applied');
          // Every upstream's check holds descriptors: a longer list leaves fewer for clients.
          this.#applyCaps();
          void this.#saveCache(dc.cacheFile);
        },
      });
      if (f.discovered) d.seed(f.discovered);
      this.#discoveries.set(f.name, { d, key: JSON.stringify(dc) });
      d.start();
    }
  }

  /** Starts the frontend's --upstream-dns refresher (replacing one whose names or interval changed), after a first resolution. */
  async #startDns(f: Frontend): Promise<void> {
    const names = f.config.upstreamDns ?? [];
    const key = JSON.stringify([names, f.config.dnsRefreshMs]);
    const had = this.#dns.get(f.name);
    if (had?.key === key) return;
    had?.r.close();
    this.#dns.delete(f.name);
    if (names.length === 0) return;
    const r = new DnsRefresher({
      frontend: f.name,
      names,
      intervalMs: f.config.dnsRefreshMs ?? 30_000,
      clock: this.#deps.clock,
      lookup: this.#opts.lookup ?? systemLookup,
      log: this.#log,
      onAnswer: (list) => {
        f.setResolved(list);
        this.#applyCaps();
      },
    });
    this.#dns.set(f.name, { r, key });
    await r.refresh();
    r.start();
  }

  #stopDns(names?: ReadonlySet<string>): void {
    for (const [name, { r }] of this.#dns) {
      if (names && names.has(name)) continue;
      r.close();
      this.#dns.delete(name);
    }
  }

  async #stopDiscoveries(): Promise<void> {
    const all = [...this.#discoveries.values()];
    this.#discoveries.clear();
    await Promise.all(all.map((x) => x.d.close()));
  }

  #applyCaps(): void {
    const caps = planConnectionCaps({
      fdLimit: this.#fdLimit,
      fdsInUse: this.#fdsAtStart,
      adminConnections: ADMIN_MAX_CONNECTIONS,
      frontends: this.#frontends.map((f) => ({ name: f.name, maxConnections: f.config.maxConnections, upstreams: f.list.all().length })),
    });
    for (const f of this.#frontends) {
      const c = caps.get(f.name)!;
      if (c.cap === f.connectionCap) continue;
      f.setConnectionCap(c.cap);
      if (c.source !== 'none')
        this.#log.info({ frontend: f.name, maxConnections: c.cap, from: c.source, fdLimit: this.#fdLimit, fdsAtStart: this.#fdsAtStart }, 'connection cap set');
    }
  }

  #views(): FrontendView[] {
    return this.#frontends.map((f) => ({
      name: f.name,
      listen: f.addresses,
      counters: f.counters,
      upstreams: f.list.all(),
      localFault: f.localFault,
      connectionCap: f.connectionCap,
      openConnections: f.sample().openConnections,
      discovery: this.#discoveries.get(f.name)?.d.status,
      connections: (key) => {
        const b = f.conns.bytesFor(key);
        return { established: f.conns.countFor(key), total: f.conns.totalFor(key), bytesToUpstream: b.toUpstream, bytesToClient: b.toClient };
      },
    }));
  }

  async #reloadNow(next: ProxyConfig): Promise<ReloadSummary> {
    // Prepare: everything that can fail, before anything changes.
    const checks = await Promise.all(next.frontends.map((fc) => loadHealthCheck(fc)));
    const undo: (() => void)[] = [];
    const started: Frontend[] = [];
    try {
      for (const [i, fc] of next.frontends.entries()) {
        const f = this.#frontends.find((x) => x.name === fc.name);
        if (f) undo.push(await f.openAddedListeners(fc));
        else started.push(await this.#startFrontend(fc, checks[i]!));
      }
    } catch (err) {
      for (const u of undo) u();
      for (const f of started) f.destroy();
      throw err;
    }
    // Commit: nothing below can fail.
    const summary: ReloadSummary = { added: started.map((f) => f.name), removed: [], updated: [] };
    const nextFrontends = next.frontends.map((fc, i) => {
      const f = this.#frontends.find((x) => x.name === fc.name);
      if (!f) return started.find((x) => x.name === fc.name)!;
      f.update(fc, checks[i]!);
      summary.updated.push(f.name);
      return f;
    });
    for (const f of this.#frontends) {
      if (nextFrontends.includes(f)) continue;
      f.retire();
      this.#retired.push(f);
      summary.removed.push(f.name);
    }
    this.#retired = this.#retired.filter((f) => f.conns.size > 0);
    this.#frontends = nextFrontends;
    this.#current = next;
    this.#applyCaps();
    this.#stopDns(new Set(this.#frontends.map((f) => f.name)));
    for (const f of this.#frontends) await this.#startDns(f);
    await this.#syncDiscoveries();
    return summary;
  }
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
