// The routes loop: state files (+ GCP metadata) → desired ruleset → kernel, once per change, and a
// full resync on a timer that also catches drift. One sync runs at a time; requests that arrive
// while it runs merge into one follow-up, so rapid flips end in the rules of the final files.
import type { Clock } from '../base/clock.ts';
import type { Logger } from '../base/logger.ts';
import { describeError } from '../base/errors.ts';
import { decideVipStates, type StateFile, type VipState } from './vip-states.ts';
import { buildDesiredRuleset, describeRulesFor, type DesiredRuleset, type Family, type NatTarget, type PortMatch, type Provider } from './desired-ruleset.ts';
import type { RulesBackend } from './rules-backend.ts';
import { findConflicts, type LocalRoute } from './conflicting-routes.ts';
import type { GcpVipSourceStatus } from './gcp-vip-source.ts';
import type { RoutesMetrics } from './routes-metrics.ts';
import { printable } from '../watch/vip-address.ts';
import { decideDownPeers, type DownPeerDecision } from './decide-down-peers.ts';

export interface RoutesAgentOptions {
  provider: Provider;
  staleAfterMs: number;
  resyncMs: number;
  ports: PortMatch;
  natTarget: NatTarget;
  nodeIps: Partial<Record<Family, string>>;
  healthCheckerCidrs: string[];
  /** --vip: the managed VIPs; empty means every VIP named by a file (azure) or forwarded (gcp). */
  vips: string[];
  removeConflictingRoutes: boolean;
  cleanupOnExit: boolean;
  /** A managed VIP with neither state file: down (Azure's script) or up (GCP's script). Default: up on gcp, down on azure. */
  withoutStateFile?: 'up' | 'down';
  /** With --down-peer: how long after a VIP turns down its node-originated new connections go to a healthy peer. */
  downPeerWindowMs?: number;
}

export interface RoutesAgentDeps {
  reader: {
    read(): Promise<StateFile[]>;
    /** `<VIP>.beat` files from the heartbeat directory; optional for readers without one. */
    readBeats?(): Promise<StateFile[]>;
    ensureWatching(): Promise<void>;
    readonly watching: boolean;
    readonly dir: string;
    readonly heartbeatDir?: string;
    close(): void;
  };
  backend: RulesBackend;
  /** GCP without --vip: forwarded IPs from metadata. */
  vipSource?: { refresh(): Promise<{ changed: boolean; error?: string }>; readonly vips: string[]; readonly status: GcpVipSourceStatus };
  /** GCP: the guest agent's local routes. */
  localRoutes?: { list(): Promise<LocalRoute[]>; remove(route: LocalRoute): Promise<void> };
  /** OVN-Kubernetes shared gateway: reroute policies for up VIPs (see ovn-reroute.ts); best-effort. */
  ovn?: { sync(upVips: readonly string[]): Promise<void>; removeAll(): Promise<number>; readonly status: unknown };
  /** Names of OpenShift's own route tables present next to ours (`gcp-vips`, `azure-vips`); best-effort. */
  foreignTables?: () => Promise<string[]>;
  /** --down-peer: the peer apiservers whose last check passed, in the configured order. */
  peers?: { healthy(): readonly string[]; readonly status: unknown };
  clock: Clock;
  log: Logger;
  metrics: RoutesMetrics;
}

type SyncKind = 'event' | 'full';
/** First retry after a failed sync; doubles per failure up to the resync interval (at most 30 s). */
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30_000;
/** Bad file names remembered so each is logged once. */
const MAX_REMEMBERED = 1000;

export class RoutesAgent {
  readonly #o: RoutesAgentOptions;
  readonly #d: RoutesAgentDeps;
  #pending: SyncKind | undefined;
  #running: Promise<void> | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Every timer is a clock sleep with its own abort handle, so an injected clock drives them all. */
  readonly #timers = new Set<AbortController>();
  #staleTimer: AbortController | undefined;
  #appliedKey: string | undefined;
  #fingerprint = '';
  #generation = 0;
  #vips: VipState[] = [];
  #ruleset: DesiredRuleset = { nat: [], forwardDrop: [] };
  #problems: string[] = [];
  #conflicts: { vip: string; route: LocalRoute; removed: boolean }[] = [];
  #lastSync: { at: string; ok: boolean; error?: string } | undefined;
  #lastChangeAt: string | undefined;
  #drift = { repairs: 0, lastAt: undefined as string | undefined };
  readonly #loggedBadNames = new Set<string>();
  #badNames: string[] = [];
  /** The one retry timer: a failed sync re-arms it, never adds a second. */
  #retryTimer: AbortController | undefined;
  #retryDelayMs = RETRY_MIN_MS;
  #failures = 0;
  /** The metadata read in flight: reads never overlap, a second request joins the first. */
  #metadataRead: Promise<void> | undefined;
  /** Auxiliary checks (conflicting routes, foreign tables): their last error, logged once per streak. */
  readonly #auxErrors = new Map<string, string>();
  #foreign: string[] = [];
  #downPeers: DownPeerDecision = { downSince: new Map(), redirects: [], unserved: [] };
  /** Set for the last sync before exit: nobody checks the peers after it, so no peer rule may outlive it. */
  #exiting = false;

  constructor(options: RoutesAgentOptions, deps: RoutesAgentDeps) {
    this.#o = options;
    this.#d = deps;
  }

  /** Applies the first ruleset, then keeps it in line with the files; resolves after the first sync. */
  async start(): Promise<void> {
    this.#every(this.#o.resyncMs, () => this.requestSync('full'));
    if (this.#d.vipSource) this.#every(this.#o.resyncMs, () => void this.#refreshMetadata());
    this.requestSync('full');
    await this.#running;
    if (this.#d.vipSource) await this.#refreshMetadata();
  }

  /** Consecutive failed syncs (0 after a good one) and the delay before the next retry. */
  get retry(): { failures: number; nextDelayMs: number; armed: boolean } {
    return { failures: this.#failures, nextDelayMs: this.#retryDelayMs, armed: this.#retryTimer !== undefined };
  }

  /** Asks for a sync soon; 'full' also re-arms the watch, checks drift and conflicting routes. */
  requestSync(kind: SyncKind): void {
    if (this.#closed) return;
    this.#pending = this.#pending === 'full' || kind === 'full' ? 'full' : 'event';
    this.#running ??= this.#drain().finally(() => (this.#running = undefined));
  }

  get ready(): boolean {
    return this.#lastSync?.ok === true;
  }

  async #drain(): Promise<void> {
    while (this.#pending && !this.#closed) {
      const kind = this.#pending;
      this.#pending = undefined;
      try {
        await this.#sync(kind);
        this.#lastSync = { at: this.#now(), ok: true };
        if (this.#failures) this.#d.log.info({ afterFailures: this.#failures }, 'sync works again');
        this.#failures = 0;
        this.#retryDelayMs = RETRY_MIN_MS;
        if (this.#retryTimer) this.#clear(this.#retryTimer);
        this.#retryTimer = undefined;
      } catch (err) {
        this.#appliedKey = undefined; // the next sync applies in full
        this.#lastSync = { at: this.#now(), ok: false, error: describeError(err) };
        this.#failures++;
        this.#d.metrics.syncFailures.inc();
        // One timer, whatever the number of failures: an armed timer is left alone, so retries
        // never multiply; the delay doubles up to the resync interval.
        if (!this.#retryTimer) {
          const delay = this.#retryDelayMs;
          this.#d.log.error({ err: describeError(err), failures: this.#failures, retryInMs: delay }, 'sync failed; retrying');
          this.#retryTimer = this.#after(delay, () => {
            this.#retryTimer = undefined;
            this.requestSync('full');
          });
          this.#retryDelayMs = Math.min(delay * 2, Math.max(RETRY_MIN_MS, Math.min(this.#o.resyncMs, RETRY_MAX_MS)));
        }
      }
    }
  }

  async #sync(kind: SyncKind): Promise<void> {
    const { reader, backend, log, metrics } = this.#d;
    if (kind === 'full') await reader.ensureWatching().catch((err) => log.warn({ err: describeError(err) }, 'cannot watch the state directory'));
    const files = await reader.read();
    const beats = reader.readBeats ? await this.#auxiliary('heartbeat directory', () => reader.readBeats!(), []) : [];
    const managed = this.#o.vips.length ? this.#o.vips : this.#o.provider === 'gcp' ? (this.#d.vipSource?.vips ?? []) : undefined;
    const decision = decideVipStates(files, {
      nowMs: this.#d.clock.now(),
      staleAfterMs: this.#o.staleAfterMs,
      managed,
      withoutStateFile: this.#withoutStateFile,
      beats,
    });
    // One bad name is skipped and reported once; every other VIP is reconciled as usual.
    for (const name of decision.badNames) {
      // Bounded memory: past MAX_REMEMBERED names a directory full of junk is not logged name by name.
      if (this.#loggedBadNames.has(name) || this.#loggedBadNames.size >= MAX_REMEMBERED) continue;
      this.#loggedBadNames.add(name);
      log.warn(
        { dir: reader.dir, file: printable(name) },
        'ignoring a state file: its name is not a valid VIP (no zone ids, link-local, multicast or unspecified addresses), or it is too large or unreadable',
      );
    }
    this.#badNames = decision.badNames;
    for (const v of decision.vips) {
      if (!v.reason.includes('heartbeat directory') || this.#loggedBadNames.has(`beat:${v.vip}`)) continue;
      this.#loggedBadNames.add(`beat:${v.vip}`);
      log.warn({ vip: v.vip, heartbeatDir: reader.heartbeatDir, reason: v.reason }, 'kubeward watch writes heartbeats we cannot see; the VIP counts as down');
    }
    metrics.badStateFiles.set(decision.badNames.length);
    if (kind === 'full' && this.#d.localRoutes)
      await this.#auxiliary('conflicting local routes', () => this.#checkConflicts(decision.vips.map((v) => v.vip)), undefined);
    if (kind === 'full' && this.#d.foreignTables) await this.#auxiliary('foreign route tables', () => this.#checkForeignTables(), undefined);
    const downPeers = this.#decideDownPeers(decision.vips);
    const { ruleset, problems } = buildDesiredRuleset({ ...this.#o, vips: decision.vips, downPeerRedirects: downPeers.redirects });
    this.#logDownPeerChanges(downPeers);
    this.#downPeers = downPeers;
    metrics.downPeerRedirects.set(ruleset.nat.filter((r) => r.peer).length);
    if (problems.join() !== this.#problems.join()) for (const p of problems) log.warn({ problem: p }, 'rules left out');
    this.#vips = decision.vips;
    this.#problems = problems;
    for (const v of decision.vips) metrics.vipUp.set({ vip: v.vip }, v.up ? 1 : 0);
    const key = JSON.stringify(ruleset);
    const changed = key !== this.#appliedKey;
    if (changed) {
      await this.#apply(ruleset, key);
      this.#generation++;
      this.#lastChangeAt = this.#now();
      metrics.generation.set(this.#generation);
      log.info(
        { generation: this.#generation, up: decision.vips.filter((v) => v.up).map((v) => v.vip), down: decision.vips.filter((v) => !v.up).map((v) => v.vip) },
        'rules applied',
      );
    } else if (kind === 'full') {
      const now = await backend.readBack();
      if (now !== this.#fingerprint) {
        log.warn(
          { backend: backend.name, found: now === '' ? 'nothing' : 'changed rules' },
          'our rules were changed or removed by something else; restoring them',
        );
        await this.#apply(ruleset, key);
        this.#drift = { repairs: this.#drift.repairs + 1, lastAt: this.#now() };
        metrics.driftRepairs.inc();
      }
    }
    if (this.#d.ovn && (kind === 'full' || changed)) {
      const upVips = decision.vips.filter((v) => v.up).map((v) => v.vip);
      await this.#auxiliary('ovn reroute', () => this.#d.ovn!.sync(upVips), undefined);
    }
    const next = [decision.nextChangeAtMs, downPeers.nextChangeAtMs].filter((t): t is number => t !== undefined);
    this.#scheduleStaleCheck(next.length ? Math.min(...next) : undefined);
  }

  #decideDownPeers(vips: readonly VipState[]): DownPeerDecision {
    if (this.#d.peers === undefined || this.#o.downPeerWindowMs === undefined) return { downSince: new Map(), redirects: [], unserved: [] };
    return decideDownPeers({
      nowMs: this.#d.clock.now(),
      vips,
      downSince: this.#downPeers.downSince,
      windowMs: this.#o.downPeerWindowMs,
      healthyPeers: this.#exiting ? [] : this.#d.peers.healthy(),
    });
  }

  #logDownPeerChanges(next: DownPeerDecision): void {
    const key = (d: DownPeerDecision) => JSON.stringify([d.redirects, d.unserved.map((u) => u.vip)]);
    if (key(next) === key(this.#downPeers)) return;
    for (const r of next.redirects)
      this.#d.log.info({ vip: r.vip, peer: r.to }, "VIP down: the node's own new connections to it go to a healthy peer apiserver");
    for (const u of next.unserved) this.#d.log.warn({ vip: u.vip, reason: u.reason }, 'VIP down and no healthy peer to send its traffic to');
    const was = this.#downPeers.redirects.filter((r) => !next.redirects.some((n) => n.vip === r.vip));
    for (const r of was) this.#d.log.info({ vip: r.vip, peer: r.to }, 'peer redirect withdrawn (VIP up, window over, or peer failing)');
  }

  async #apply(ruleset: DesiredRuleset, key: string): Promise<void> {
    const { backend, metrics } = this.#d;
    const stop = metrics.applySeconds.startTimer();
    try {
      await backend.apply(ruleset);
      this.#fingerprint = await backend.readBack();
      metrics.applies.inc({ result: 'ok' });
    } catch (err) {
      metrics.applies.inc({ result: 'error' });
      throw err;
    } finally {
      stop();
    }
    this.#ruleset = ruleset;
    this.#appliedKey = key;
  }

  async #checkConflicts(vips: string[]): Promise<void> {
    const { localRoutes, log, metrics } = this.#d;
    const found = findConflicts(await localRoutes!.list(), vips);
    this.#conflicts = [];
    for (const c of found) {
      let removed = false;
      if (this.#o.removeConflictingRoutes) {
        try {
          await localRoutes!.remove(c.route);
          removed = true;
          metrics.conflictingRoutesRemoved.inc();
          log.warn({ vip: c.vip, route: c.route }, 'removed a local proto 66 route for a managed VIP (it makes the VIP local whatever its health)');
        } catch (err) {
          log.error({ vip: c.vip, route: c.route, err: describeError(err) }, 'cannot remove a conflicting local route');
        }
      } else {
        log.error(
          { vip: c.vip, route: c.route },
          'a local proto 66 route makes this VIP local whatever its health; remove it, stop the guest agent from adding it, or run with --remove-conflicting-routes',
        );
      }
      this.#conflicts.push({ ...c, removed });
    }
    metrics.conflictingRoutes.set(this.#conflicts.filter((c) => !c.removed).length);
  }

  /**
   * Runs a check that helps but must never block the rules: a failure is logged once per streak
   * (and when it clears) and the fallback is used.
   */
  async #auxiliary<T>(what: string, fn: () => Promise<T>, fallback: T): Promise<T> {
    try {
      const v = await fn();
      if (this.#auxErrors.delete(what)) this.#d.log.info({ check: what }, 'auxiliary check works again');
      return v;
    } catch (err) {
      const msg = describeError(err);
      if (!this.#auxErrors.has(what)) this.#d.log.warn({ check: what, err: msg }, 'auxiliary check failed; rules are applied without it');
      this.#auxErrors.set(what, msg);
      this.#d.metrics.auxiliaryFailures.inc({ check: what });
      return fallback;
    }
  }

  async #checkForeignTables(): Promise<void> {
    const found = await this.#d.foreignTables!();
    if (found.join() !== this.#foreign.join() && found.length) {
      this.#d.log.warn(
        { tables: found },
        "OpenShift's own hairpin rules are present next to ours; both act on the same VIPs, so stop openshift-gcp-routes / openshift-azure-routes (and their path unit) or stop kubeward routes",
      );
    }
    this.#foreign = found;
  }

  /** One metadata read at a time: a request while one is in flight waits for it instead of starting another. */
  #refreshMetadata(): Promise<void> {
    this.#metadataRead ??= this.#readMetadata().finally(() => (this.#metadataRead = undefined));
    return this.#metadataRead;
  }

  async #readMetadata(): Promise<void> {
    const r = await this.#d.vipSource!.refresh();
    this.#d.metrics.metadataReads.inc({ result: r.error ? 'error' : 'ok' });
    if (r.error) this.#d.log.warn({ err: r.error, keeping: this.#d.vipSource!.vips }, 'metadata read failed; keeping the last good VIPs');
    if (r.changed) {
      const ranges = this.#d.vipSource!.status.lastGood?.ranges ?? [];
      this.#d.log.info({ vips: this.#d.vipSource!.vips, ranges }, 'forwarded IPs from metadata changed');
      if (ranges.length) this.#d.log.warn({ ranges }, 'forwarded ranges are not managed (no single VIP to match); give --vip for the address clients use');
      this.requestSync('full');
    }
  }

  #scheduleStaleCheck(atMs: number | undefined): void {
    if (this.#staleTimer) this.#clear(this.#staleTimer);
    this.#staleTimer = atMs === undefined ? undefined : this.#after(Math.max(0, atMs - this.#d.clock.now()), () => this.requestSync('event'));
  }

  status(): unknown {
    return {
      provider: this.#o.provider,
      backend: this.#d.backend.name,
      stateDir: this.#d.reader.dir,
      watching: this.#d.reader.watching,
      natTarget: this.#o.natTarget,
      ports: this.#o.ports,
      generation: this.#generation,
      lastSync: this.#lastSync,
      lastChangeAt: this.#lastChangeAt,
      drift: this.#drift,
      vips: this.#vips.map((v) => ({ ...v, rules: describeRulesFor(this.#ruleset, v.vip) })),
      forwardDrop: this.#ruleset.forwardDrop,
      problems: this.#problems,
      badStateFiles: this.#badNames.slice(0, 50).map(printable),
      badStateFileCount: this.#badNames.length,
      retry: this.retry,
      auxiliaryErrors: Object.fromEntries(this.#auxErrors),
      foreignTables: this.#foreign,
      withoutStateFile: this.#withoutStateFile,
      conflictingRoutes: this.#conflicts,
      ...(this.#d.peers
        ? {
            downPeers: {
              windowMs: this.#o.downPeerWindowMs,
              redirects: this.#downPeers.redirects,
              unserved: this.#downPeers.unserved,
              downSince: Object.fromEntries([...this.#downPeers.downSince].map(([v, t]) => [v, new Date(t).toISOString()])),
              checks: this.#d.peers.status,
            },
          }
        : {}),
      ...(this.#d.vipSource ? { metadata: this.#d.vipSource.status } : {}),
      ...(this.#d.ovn ? { ovnReroute: this.#d.ovn.status } : {}),
    };
  }

  /**
   * Stops the loop, waits for a sync in flight, and removes our rules when configured to. Runs once;
   * a later caller gets the same completion (it too returns only once the rules are settled).
   * keepRules: leave them whatever cleanupOnExit says (a successor took over).
   */
  close(opts: { keepRules?: boolean } = {}): Promise<void> {
    return (this.#closing ??= this.#close(opts.keepRules === true));
  }

  async #close(keepRules: boolean): Promise<void> {
    this.#closed = true;
    for (const t of this.#timers) t.abort();
    this.#timers.clear();
    this.#d.reader.close();
    await this.#running;
    if (!this.#o.cleanupOnExit || keepRules) {
      // The rules left behind match the state files as they are now: in kubeward agent the watcher
      // publishes its exit state just before routes stops, and that verdict must not be lost.
      // An 'event' sync: it re-reads the files and applies a change, and starts no watcher or check.
      // Peer redirects are left out of it: once we are gone nobody checks that the peer still answers.
      this.#exiting = true;
      await this.#sync('event').catch((err: unknown) =>
        this.#d.log.warn({ err: describeError(err) }, 'last sync before exit failed; leaving the rules of the previous sync'),
      );
      return this.#d.log.info('leaving our rules in place, so a restart has no hairpin gap (remove them with --cleanup-on-exit or kubeward routes --clean-up)');
    }
    await this.#d.backend.cleanup();
    this.#d.log.info({ backend: this.#d.backend.name }, 'removed our rules');
    if (this.#d.ovn)
      await this.#auxiliary(
        'ovn reroute',
        async () => this.#d.log.info({ removed: await this.#d.ovn!.removeAll() }, 'removed our OVN reroute policies'),
        undefined,
      );
  }

  get #withoutStateFile(): 'up' | 'down' {
    return this.#o.withoutStateFile ?? (this.#o.provider === 'gcp' ? 'up' : 'down');
  }

  #now(): string {
    return new Date(this.#d.clock.now()).toISOString();
  }

  /**
   * Periodic timers keep the process alive (a daemon with no admin listener has nothing else):
   * systemClock's sleeps are referenced timers, and one periodic sleep is always pending until close.
   */
  #every(ms: number, fn: () => void): void {
    if (this.#closed) return;
    const timer = new AbortController();
    this.#timers.add(timer);
    void (async () => {
      for (;;) {
        try {
          await this.#d.clock.sleep(ms, timer.signal);
        } catch {
          return; // aborted by close()
        }
        if (timer.signal.aborted) return;
        fn();
      }
    })();
  }

  #after(ms: number, fn: () => void): AbortController {
    const timer = new AbortController();
    // A sync that ends after close() must arm nothing: no timer fires or keeps the process alive then.
    if (this.#closed) {
      timer.abort();
      return timer;
    }
    this.#timers.add(timer);
    this.#d.clock.sleep(ms, timer.signal).then(
      () => {
        // A timer cleared after its sleep ended but before this callback ran must not fire.
        if (timer.signal.aborted) return;
        this.#timers.delete(timer);
        fn();
      },
      () => {},
    );
    return timer;
  }

  #clear(timer: AbortController): void {
    timer.abort();
    this.#timers.delete(timer);
  }
}
