// One frontend: its listeners, upstream pool, health checks and connections. Accepts a client,
// picks an upstream, retries a failed connect on the next one inside the same client connection,
// then has its relay join the two (relay/relay.ts: which data path that is, the frontend does not
// know). Acts on the upstream list's verdicts (log, evict).
import type { ListenerHandover } from '../handover/handover-session.ts';
import type { Clock } from '../base/clock.ts';
import type { Logger } from '../base/logger.ts';
import { describeError } from '../base/errors.ts';
import { formatHostPort, type HostPort } from '../config/fields.ts';
import type { ProbeResult } from '../probe/probe-result.ts';
import { ConnectionSet } from './connection-set.ts';
import type { AcceptedHandle } from './adopt-socket.ts';
import type { PendingClient, Relay, RelayFactory } from './relay/relay.ts';
import type { RelayOwner, RelayTiming } from './relay/relayed-connection.ts';
import { HealthChecker } from './health-checker.ts';
import { ListenerSet } from './listener-set.ts';
import { pickUpstream } from './pick-upstream.ts';
import { MAX_PACE_WAIT_MS } from './recovery-pace.ts';
import { herdSettings, type FrontendConfig, type LoadedHealthCheck } from './proxy-config.ts';
import type { FrontendSample, ProxyMetrics } from './proxy-metrics.ts';
import { RebalanceLoop } from './rebalance-loop.ts';
import { UpstreamList, type TransitionCause, type UpstreamEvent, type UpstreamMember } from './upstream-list.ts';
import { fetchUpstreamVersion, probeUpstream } from './upstream-probe.ts';
import { ProbeTlsContext } from '../probe/probe-tls-context.ts';
import { formatKubeMinor, isOlder } from './version-skew.ts';
import { planResolved } from './dns-upstreams.ts';

export interface FrontendDeps {
  log: Logger;
  metrics: ProxyMetrics;
  clock: Clock;
  random: () => number;
  isLocal: (host: string) => boolean;
  reusePort?: boolean;
  /** --handover-socket: listeners taken from the predecessor and offered to the successor. */
  handover?: ListenerHandover;
  /** --workers: the primary offers each accepted connection to a worker first (true: a worker took it). */
  handOff?: (frontend: string, client: AcceptedHandle) => boolean;
  /** --workers, in a worker: no listener of its own; connections come from the primary (adopt). */
  fromPrimary?: boolean;
  /** Told after each client connection of this process ends (a worker reports its load to the primary). */
  onConnectionClosed?: () => void;
  /** The process's data path (relay/choose-relay.ts): each frontend opens its relay from it. */
  relay: RelayFactory;
  /** Told every check result after it is applied (see StartProxyOptions.onCheckResult). */
  onCheckResult?: (frontend: string, upstream: string, result: ProbeResult) => void;
}

export type CloseWhy = 'dead' | 'drained' | 'removed';

export interface FrontendCounters {
  accepted: number;
  /** Client connections closed because no upstream accepted: what clients see as failures. */
  failed: number;
  retries: number;
  failOpen: number;
  closedByProxy: number;
  /** Connections closed to move their clients to a less loaded upstream (included in closedByProxy). */
  rebalanced: number;
}

export class Frontend {
  #config: FrontendConfig;
  readonly list: UpstreamList;
  readonly counters: FrontendCounters = { accepted: 0, failed: 0, retries: 0, failOpen: 0, closedByProxy: 0, rebalanced: 0 };
  readonly conns = new ConnectionSet();
  readonly #deps: FrontendDeps;
  #check: LoadedHealthCheck;
  /** The checks' TLS context; a reload's new material builds a new one at the next check. */
  readonly #probeTls = new ProbeTlsContext();
  #targets = new Map<string, HostPort>();
  /** The last good list from discovery; undefined while there is none (the seeds serve alone). */
  #discovered: HostPort[] | undefined;
  readonly #listeners: ListenerSet;
  readonly #checker: HealthChecker;
  readonly #rebalancer: RebalanceLoop;
  /** Slow start and rebalancing with defaults filled in, resolved once (not per connection). */
  #herd: ReturnType<typeof herdSettings>;
  #destroyed = false;
  /** Client connections open now (accepted, not yet closed) and the most allowed at once. */
  #open = 0;
  #cap = Number.MAX_SAFE_INTEGER;
  /** Connections closed at accept since the cap started biting; undefined while under it. */
  #capRejected: number | undefined;
  /** Upstreams whose latest check was a local fault, with that result; a streak while non-empty. */
  readonly #localFaults = new Map<string, ProbeResult>();
  #localSince: number | undefined;
  #listenerErrors = { code: '', loggedAt: -Infinity, suppressed: 0 };
  /** Addresses of the --upstream-dns names in use, and the latest answer (undefined before the first). */
  #resolved: HostPort[] = [];
  #resolvedAnswer: HostPort[] | undefined;
  /** Up and undrained upstreams at the last transition, for the "fewer than two" log. */
  #reachable: number | undefined;
  /** Upstreams whose /version is being read. */
  readonly #versionFetches = new Set<string>();
  readonly #relay: Relay;

  constructor(config: FrontendConfig, check: LoadedHealthCheck, deps: FrontendDeps, discovered?: HostPort[]) {
    this.#config = config;
    this.#deps = deps;
    this.#relay = deps.relay.open(config.name, this.#owner);
    this.#check = check;
    this.#herd = herdSettings(config);
    this.#discovered = discovered?.length ? discovered : undefined;
    this.list = new UpstreamList(this.#members(), { rise: check.rise, fall: check.fall });
    this.#listeners = new ListenerSet({
      name: config.name,
      reusePort: deps.reusePort,
      handover: deps.handover,
      passive: deps.fromPrimary,
      onConnection: (client) => {
        if (!this.#deps.handOff?.(this.name, client)) this.#accept(client);
      },
      onError: (err) => this.#onListenerError(err),
    });
    this.#checker = new HealthChecker({
      intervalMs: check.intervalMs,
      clock: deps.clock,
      random: deps.random,
      probe: (key, signal) => probeUpstream(this.#targets.get(key)!, this.#check, this.#probeTls, signal),
      onResult: (key, result) => this.#onCheck(key, result),
    });
    this.#rebalancer = new RebalanceLoop({
      list: this.list,
      conns: this.conns,
      clock: deps.clock,
      random: deps.random,
      settings: () => this.#herd,
      onClose: (d) => {
        this.counters.closedByProxy++;
        this.counters.rebalanced++;
        this.#deps.metrics.closedByProxy.inc({ frontend: this.name, upstream: d.from, why: 'rebalance' });
        // At most one per interval: not the hot path.
        this.#deps.log.info({ frontend: this.name, from: d.from, to: d.to, spread: d.spread }, 'rebalancing: closed a connection of the busiest upstream');
      },
      onError: (err) => this.#deps.log.error({ frontend: this.name, err: describeError(err) }, 'rebalancing round failed; the next one runs as planned'),
    });
  }

  /** One rebalancing round now (tests and callers that drive it themselves). */
  rebalanceOnce(): ReturnType<RebalanceLoop['step']> {
    return this.#rebalancer.step();
  }

  get name(): string {
    return this.#config.name;
  }

  get config(): FrontendConfig {
    return this.#config;
  }

  /** Bound listen addresses (port 0 resolved). */
  get addresses(): HostPort[] {
    return this.#listeners.addresses;
  }

  /** Client connections open in this process (accepted and not yet closed). */
  get openConnections(): number {
    return this.#open;
  }

  /** A connection another process accepted for this frontend (a worker's, from the primary). */
  adopt(client: AcceptedHandle): void {
    this.#accept(client);
  }

  /** Upstreams from discovery (or the cache), or undefined while only the seeds are used. */
  get discovered(): readonly HostPort[] | undefined {
    return this.#discovered;
  }

  /**
   * Seeds alone, or the discovered list with the seeds it does not name kept as backups: the last
   * resort when every discovered upstream is unusable (a control plane that moved).
   */
  #members(): UpstreamMember[] {
    const seeds = [...this.#config.upstreams, ...this.#resolved];
    const primary = this.#discovered ?? seeds;
    const targets = new Map(primary.map((u) => [formatHostPort(u), u]));
    const members: UpstreamMember[] = [...targets].map(([key, u]) => ({ key, local: this.#deps.isLocal(u.host) }));
    for (const u of seeds) {
      const key = formatHostPort(u);
      if (targets.has(key)) continue;
      targets.set(key, u);
      members.push({ key, local: this.#deps.isLocal(u.host), backup: true });
    }
    this.#targets = targets;
    return members;
  }

  /** Starts the health checks and the listeners; a listen failure is a usage error naming the address. */
  async start(): Promise<void> {
    this.#checker.sync([...this.#targets.keys()]);
    this.#rebalancer.start();
    await this.#listeners.open(this.#config.listen);
  }

  /** Opens listen addresses the next config adds (before it is committed); returns an undo. */
  async openAddedListeners(next: FrontendConfig): Promise<() => void> {
    const opened = await this.#listeners.open(next.listen);
    return () => void this.#listeners.close(opened);
  }

  /**
   * Applies a new config in place: listeners no longer listed stop accepting, upstreams and checks
   * follow, timeouts apply to new connections. Established connections are left alone, except
   * those of upstreams that left the list, which are closed spread over drainSpread.
   */
  update(next: FrontendConfig, check: LoadedHealthCheck): void {
    const keep = new Set(next.listen.map(formatHostPort));
    void this.#listeners.close(this.#listeners.keys().filter((k) => !keep.has(k)));
    this.#config = next;
    this.#check = check;
    this.#herd = herdSettings(next);
    this.list.setPolicy({ rise: check.rise, fall: check.fall });
    this.#checker.setInterval(check.intervalMs);
    this.#applyMembers();
  }

  /** The addresses of the --upstream-dns names: a new answer (empty when every name failed: the last good set stays). */
  setResolved(answer: readonly HostPort[]): { added: string[]; removed: string[] } {
    this.#resolvedAnswer = [...answer];
    return this.#replanResolved();
  }

  get resolved(): readonly HostPort[] {
    return this.#resolved;
  }

  /** Applies the DNS plan: departed addresses stay while up until every new one has passed its checks. */
  #replanResolved(): { added: string[]; removed: string[] } {
    if (this.#resolvedAnswer === undefined) return { added: [], removed: [] };
    const next = planResolved(this.#resolved, this.#resolvedAnswer, (key) => this.list.get(key)?.state === 'up');
    const same = next.length === this.#resolved.length && next.every((u, i) => formatHostPort(u) === formatHostPort(this.#resolved[i]!));
    if (same) return { added: [], removed: [] };
    this.#resolved = next;
    return this.#applyMembers();
  }

  /** A new list from discovery (never empty: the caller filters that out). */
  setDiscovered(upstreams: readonly HostPort[]): { added: string[]; removed: string[] } {
    this.#discovered = [...upstreams];
    return this.#applyMembers();
  }

  #applyMembers(): { added: string[]; removed: string[] } {
    const diff = this.list.reconcile(this.#members());
    // A key that comes back while its old connections are still being closed keeps counting them.
    for (const key of diff.added) for (let i = this.conns.countFor(key); i > 0; i--) this.list.acquire(key);
    this.#checker.sync([...this.#targets.keys()]);
    for (const key of diff.removed) this.#closeConnections(key, 'removed');
    if (diff.added.length || diff.removed.length)
      this.#deps.log.info({ frontend: this.name, added: diff.added, removed: diff.removed }, 'upstream list changed');
    return diff;
  }

  /** Stops accepting and checking, and leaves established connections to end by themselves (a frontend removed by a reload). */
  retire(): void {
    void this.#listeners.closeAll();
    void this.#checker.close();
    void this.#rebalancer.close();
  }

  /** The most client connections open at once (see fd-budget.ts); applies to the next accept. */
  setConnectionCap(cap: number): void {
    this.#cap = cap;
  }

  get connectionCap(): number {
    return this.#cap;
  }

  /** The local fault streak of this frontend's checks, or undefined when there is none. */
  get localFault(): { since: number; upstreams: string[]; detail: string } | undefined {
    if (this.#localSince === undefined) return undefined;
    const [first] = this.#localFaults.values();
    return { since: this.#localSince, upstreams: [...this.#localFaults.keys()], detail: first?.detail ?? '' };
  }

  /**
   * Over the cap, a connection is closed at once: its descriptor comes back before the process
   * runs out, so checks and established connections go on. Logged once when the cap starts
   * biting and once when it stops.
   */
  #overCap(accepted: AcceptedHandle): boolean {
    if (this.#open < this.#cap) {
      if (this.#capRejected !== undefined) {
        this.#deps.log.info({ frontend: this.name, cap: this.#cap, rejected: this.#capRejected }, 'below the connection cap again');
        this.#capRejected = undefined;
      }
      return false;
    }
    accepted.close();
    this.#deps.metrics.rejected.inc({ frontend: this.name, why: 'cap' });
    if (this.#capRejected === undefined) {
      this.#deps.log.warn(
        { frontend: this.name, cap: this.#cap },
        'connection cap reached: new client connections are closed at accept until some end (--max-connections)',
      );
      this.#capRejected = 0;
    }
    this.#capRejected++;
    return true;
  }

  /** Accept errors (EMFILE, ENFILE) can repeat for every connection: one line per code per 10 s. */
  #onListenerError(err: Error): void {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    const e = this.#listenerErrors;
    const now = this.#deps.clock.now();
    if (code === e.code && now - e.loggedAt < 10_000) {
      e.suppressed++;
      return;
    }
    this.#deps.log.error({ frontend: this.name, err: describeError(err), suppressedSinceLast: e.suppressed }, 'listener error');
    this.#listenerErrors = { code, loggedAt: now, suppressed: 0 };
  }

  #accept(accepted: AcceptedHandle): void {
    if (this.#overCap(accepted)) return;
    this.counters.accepted++;
    const client = this.#relay.accept(accepted);
    if (client === undefined) return;
    // Uncounted when the connection closes (connectionClosed) or, if it is never joined, once the
    // relay has released the client (abandon).
    this.#open++;
    void this.#forward(client);
  }

  #closedOne(): void {
    this.#open--;
    this.#deps.onConnectionClosed?.();
  }

  readonly #closedOneFn = (): void => this.#closedOne();

  /** The frontend as the owner of its relayed connections (one object, no callback per connection). */
  readonly #owner: RelayOwner = {
    connectionClosed: (c) => {
      this.#closedOne();
      this.list.release(c.upstreamKey);
      this.conns.remove(c);
    },
    noAnswer: (c) => this.#onNoAnswer(c.upstreamKey, c.firstByteTimeoutMs),
  };

  /** Connects a client to an upstream, or closes it when none connected or it went away. */
  async #forward(client: PendingClient): Promise<void> {
    if (!(await this.#connectLoop(client))) client.abandon(this.#closedOneFn);
  }

  /**
   * Picks upstreams and dials them until one connects (retrying on the next inside the same client
   * connection), then has the relay join it with the client; false when none did or the client
   * went away.
   */
  async #connectLoop(client: PendingClient): Promise<boolean> {
    const { list, config } = this;
    const maxAttempts = (config.maxRetries ?? list.all().length - 1) + 1;
    const tried = new Set<string>();
    let pacedMs = 0;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const { slowStartMs, pace, minVersion } = this.#herd;
      const pick = pickUpstream(list.all(), tried, this.#deps.random, { now: this.#deps.clock.now(), slowStartMs, pace, minVersion });
      if (!pick) break;
      if (pick.waitMs !== undefined && pacedMs < MAX_PACE_WAIT_MS) {
        // Recovery pacing: the best upstream has no token yet. Wait and pick again (the picture may
        // have changed); past the bound the client connects anyway, late rather than never.
        const waitMs = Math.min(pick.waitMs, MAX_PACE_WAIT_MS - pacedMs);
        pacedMs += waitMs;
        this.#deps.metrics.pacedWaits.inc({ frontend: this.name, upstream: pick.key });
        await this.#deps.clock.sleep(waitMs);
        if (client.gone || this.#destroyed) return false;
        attempt--;
        continue;
      }
      list.spendPaceToken(pick.key, this.#deps.clock.now(), pace, slowStartMs);
      tried.add(pick.key);
      if (attempt > 0) this.#count('retries');
      if (pick.failOpen) this.#count('failOpen');
      const target = this.#targets.get(pick.key)!;
      list.acquire(pick.key);
      const out = await client.dial(target, config.connectTimeoutMs);
      const labels = { frontend: this.name, upstream: pick.key };
      this.#deps.metrics.connectSeconds.observe({ ...labels, result: out.ok ? 'ok' : out.reason }, out.latencyMs / 1000);
      if (out.ok) {
        if (client.gone || this.#destroyed) {
          list.release(pick.key);
          client.discardUpstream();
          return false;
        }
        this.#deps.metrics.connections.inc(labels);
        this.conns.add(client.join(pick.key, this.#timing()));
        return true;
      }
      list.release(pick.key);
      if (out.reason === 'refused' || out.reason === 'timeout' || out.reason === 'unreachable') {
        this.#apply(pick.key, list.recordConnectFailure(pick.key, out, this.#deps.clock.now()), 'connect');
      }
      if (client.gone) return false;
    }
    this.#count('failed');
    return false;
  }

  /** A new connection's timeouts, from the config in force when it is joined (a reload may have come during its dials). */
  #timing(): RelayTiming {
    const { config } = this;
    return { idleTimeoutMs: config.idleTimeoutMs, startedAt: this.#deps.clock.now(), firstByteTimeoutMs: config.firstByteTimeoutMs };
  }

  /**
   * The passive hang signal: a client spoke and the upstream said nothing. The client's bytes are
   * already gone to it, so this connection is not retried; new ones avoid the upstream at once.
   */
  #onNoAnswer(key: string, ms: number): void {
    const detail = `no byte from the upstream within ${ms} ms of the client's first bytes`;
    this.#apply(key, this.list.recordConnectFailure(key, { reason: 'timeout', detail }, this.#deps.clock.now()), 'connect');
  }

  #count(what: 'retries' | 'failOpen' | 'failed'): void {
    this.counters[what]++;
    const m = what === 'retries' ? this.#deps.metrics.retries : what === 'failOpen' ? this.#deps.metrics.failOpen : this.#deps.metrics.clientFailures;
    m.inc({ frontend: this.name });
  }

  #onCheck(key: string, result: ProbeResult): void {
    const labels = { frontend: this.name, upstream: key };
    this.#deps.metrics.checks.inc({ ...labels, result: result.reason });
    this.#deps.metrics.checkSeconds.observe(labels, result.latencyMs / 1000);
    this.#trackLocalFault(key, result);
    const event = this.list.recordCheck(key, result, this.#deps.clock.now());
    this.#apply(key, event, 'check');
    if (result.ok && this.#herd.minVersion && (event.transition?.to === 'up' || this.list.get(key)?.version === undefined)) this.#learnVersion(key);
    this.#deps.onCheckResult?.(this.name, key, result);
  }

  /**
   * Reads the upstream's /version when the kubelet's version is known: at every rise (an upgrade
   * restarts the apiserver) and after each passing check until one answer parses. One fetch per
   * upstream at a time; a failure leaves the version unknown, which never counts as older.
   */
  #learnVersion(key: string): void {
    if (this.#versionFetches.has(key) || this.#destroyed) return;
    const target = this.#targets.get(key);
    if (!target) return;
    this.#versionFetches.add(key);
    const min = this.#herd.minVersion;
    fetchUpstreamVersion(target, this.#check, this.#probeTls, AbortSignal.timeout(this.#check.timeoutMs + 1000))
      .then((version) => {
        if (version === undefined || !this.list.setVersion(key, version)) return;
        const older = isOlder(version, min);
        this.#deps.log.info(
          { frontend: this.name, upstream: key, version: formatKubeMinor(version), kubelet: formatKubeMinor(min), older },
          older ? 'upstream is older than the kubelet: used only while no newer upstream is up' : 'upstream version',
        );
      })
      .catch(() => undefined)
      .finally(() => this.#versionFetches.delete(key));
  }

  /** Logs when fewer than two upstreams are reachable (no redundancy left) and when that ends. */
  #noteReachable(): void {
    const all = this.list.all();
    const n = all.filter((u) => u.state === 'up' && !u.drained).length;
    const before = this.#reachable;
    this.#reachable = n;
    if (before === undefined || all.length < 2) return;
    if (n < 2 && before >= 2) {
      this.#deps.log.warn({ frontend: this.name, reachable: n, known: all.length }, 'fewer than two upstreams reachable: one more failure loses the API');
    } else if (n >= 2 && before < 2) {
      this.#deps.log.info({ frontend: this.name, reachable: n, known: all.length }, 'two or more upstreams reachable again');
    }
  }

  /** A local fault streak starts with the first upstream whose check hit one and ends when none has; logged once each way. */
  #trackLocalFault(key: string, result: ProbeResult): void {
    if (result.reason === 'local') {
      this.#localFaults.set(key, result);
      if (this.#localSince !== undefined) return;
      this.#localSince = this.#deps.clock.now();
      this.#deps.log.error(
        { frontend: this.name, upstream: key, reason: 'local', detail: result.detail },
        'health checks hit a local fault: upstream states are kept and no connection is closed until checks run again',
      );
      return;
    }
    if (!this.#localFaults.delete(key) || this.#localFaults.size > 0 || this.#localSince === undefined) return;
    this.#deps.log.info({ frontend: this.name, forMs: this.#deps.clock.now() - this.#localSince }, 'health checks run again: the local fault is over');
    this.#localSince = undefined;
  }

  #apply(key: string, event: UpstreamEvent, cause: TransitionCause): void {
    const t = event.transition;
    if (t) {
      this.#noteReachable();
      // A new DNS address that passed its checks may retire the one it replaces.
      if (this.#resolvedAnswer !== undefined) this.#replanResolved();
      const fields = { frontend: this.name, upstream: key, from: t.from, to: t.to, cause, reason: t.reason, evidence: t.detail };
      if (t.to === 'down') {
        this.#deps.metrics.ejections.inc({ frontend: this.name, upstream: key, cause });
        this.#deps.log.warn(fields, 'upstream down');
      } else {
        this.#deps.log.info(fields, 'upstream up');
      }
    }
    if (event.evict) this.#closeConnections(key, 'dead');
  }

  #closeConnections(key: string, why: CloseWhy): number {
    const labels = { frontend: this.name, upstream: key, why };
    const n = this.conns.closeSpread(
      key,
      this.config.drainSpreadMs,
      () => {
        this.counters.closedByProxy++;
        this.#deps.metrics.closedByProxy.inc(labels);
      },
      this.#deps.random,
    );
    if (n > 0) this.#deps.log.warn({ ...labels, connections: n, spreadMs: this.config.drainSpreadMs }, 'closing connections, spread over the drain window');
    return n;
  }

  /** Operator drain (true) or undrain (false). Returns undefined for an unknown upstream. */
  setDrained(key: string, drained: boolean): { closing: number } | undefined {
    const event = this.list.setDrained(key, drained, this.#deps.clock.now());
    if (!event) return undefined;
    this.#deps.log.warn({ frontend: this.name, upstream: key, drained }, drained ? 'upstream drained by operator' : 'upstream undrained by operator');
    return { closing: event.evict ? this.#closeConnections(key, 'drained') : 0 };
  }

  sample(): FrontendSample {
    return {
      name: this.name,
      upstreams: this.list.all().map((u) => {
        const bytes = this.conns.bytesFor(u.key);
        return { key: u.key, state: u.state, drained: u.drained, active: u.active, bytesToUpstream: bytes.toUpstream, bytesToClient: bytes.toClient };
      }),
      localFault: this.#localSince !== undefined,
      connectionCap: this.#cap,
      openConnections: this.#open,
    };
  }

  /** Graceful: stop accepting, let connections finish for up to graceMs, then close the rest. */
  async close(graceMs: number): Promise<void> {
    // server.close() stops accepting at once; its callback would wait for every connection, so
    // the grace period is enforced here instead.
    const closed = this.#listeners.closeAll();
    await this.conns.waitIdle(graceMs);
    if (this.conns.size > 0)
      this.#deps.log.warn({ frontend: this.name, connections: this.conns.size }, 'shutdown grace over: closing the remaining connections');
    this.destroy();
    await Promise.all([closed, this.#checker.close(), this.#rebalancer.close()]);
  }

  /** Abortive: every listener, connection and check now. */
  destroy(): void {
    this.#destroyed = true;
    void this.#listeners.closeAll();
    this.conns.destroyAll();
    void this.#checker.close();
    void this.#rebalancer.close();
  }
}
