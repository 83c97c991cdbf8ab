// The watch loop: one probe at a time, results handled strictly in order, the verdict published
// for every VIP on each transition and rewritten every heartbeat. All file writes go through one
// queue, so a heartbeat never interleaves with a transition.
import type { Logger } from '../base/logger.ts';
import type { Clock } from '../base/clock.ts';
import { describeError } from '../base/errors.ts';
import { probeJudgingStall } from '../probe/loop-stall.ts';
import { failedProbe, type ProbeResult } from '../probe/probe-result.ts';
import { applyProbe, initialTracker, type HysteresisOptions, type Tracker } from './hysteresis.ts';
import type { PublishedState, StateRecord } from './state-record.ts';
import type { WatchMetrics } from './watch-metrics.ts';

export interface StatePublisher {
  publish(vip: string, record: StateRecord): Promise<void>;
  /** A heartbeat for an unchanged verdict; publishers without it get publish() again. */
  beat?(vip: string, record: StateRecord): Promise<void>;
}

export interface WatcherOptions {
  intervalMs: number;
  heartbeatMs: number;
  hysteresis: HysteresisOptions;
  probe: (signal: AbortSignal) => Promise<ProbeResult>;
  files: StatePublisher;
  vips: () => readonly string[];
  clock: Clock;
  log: Logger;
  metrics: WatchMetrics;
  pid: number;
}

interface Verdict {
  state: PublishedState;
  sinceMs: number;
  reason: string;
  generation: number;
}

export class Watcher {
  readonly #o: WatcherOptions;
  #tracker: Tracker = initialTracker;
  #verdict: Verdict | undefined;
  #lastVerdictMs = 0;
  #lastProbe: ProbeResult | undefined;
  #failStreakLogged = false;
  /** The detail of the ongoing local fault streak (reason local), if any. */
  #localFault: string | undefined;
  #writeQueue: Promise<void> = Promise.resolve();
  #lastWriteError: string | undefined;
  #published: readonly string[] = [];
  readonly #stop = new AbortController();
  #closing: Promise<void> | undefined;
  #loops: Promise<void>[] = [];

  constructor(opts: WatcherOptions) {
    this.#o = opts;
  }

  start(): void {
    this.#o.metrics.setState(this.#o.vips(), 'unknown');
    this.#loops = [this.#probeLoop(), this.#heartbeatLoop()];
  }

  /**
   * Stops probing and lets the write in flight finish; with onExit "down" publishes down for every
   * VIP before resolving. Idempotent: a later call joins the first one (and its onExit).
   */
  close(onExit: 'down' | 'keep', why: string): Promise<void> {
    return (this.#closing ??= this.#close(onExit, why));
  }

  async #close(onExit: 'down' | 'keep', why: string): Promise<void> {
    this.#stop.abort();
    await Promise.all(this.#loops);
    if (onExit === 'down') {
      const now = this.#o.clock.now();
      this.#lastVerdictMs = now;
      this.#verdict = {
        state: 'down',
        sinceMs: now,
        reason: `watcher stopped (${why}); it can no longer vouch for the apiserver`,
        generation: (this.#verdict?.generation ?? 0) + 1,
      };
      this.#o.log.info({ vips: this.#o.vips(), reason: this.#verdict.reason }, 'publishing down before exit');
      await this.#publishAll();
    }
    await this.#writeQueue;
  }

  /** The VIP set changed: publish the current verdict for new VIPs, down for removed ones. */
  vipsChanged(): void {
    if (this.#verdict) void this.#publishAll();
  }

  get state(): Tracker['state'] {
    return this.#tracker.state;
  }

  readiness(): { ready: boolean; reason: string } {
    if (!this.#verdict) return { ready: false, reason: 'no verdict yet' };
    if (this.#lastWriteError) return { ready: false, reason: `cannot write state files: ${this.#lastWriteError}` };
    if (this.#localFault !== undefined)
      return { ready: false, reason: `local fault: probes cannot run (${this.#localFault}); published ${this.#verdict.state} is kept` };
    return { ready: true, reason: `published ${this.#verdict.state} for ${this.#published.length} VIP(s)` };
  }

  status(): Record<string, unknown> {
    const v = this.#verdict;
    return {
      state: this.#tracker.state,
      since: v ? new Date(v.sinceMs).toISOString() : null,
      reason: v?.reason ?? 'no verdict yet',
      generation: v?.generation ?? 0,
      consecutiveSuccesses: this.#tracker.successes,
      consecutiveFailures: this.#tracker.failures,
      lastProbe: this.#lastProbe ?? null,
      lastVerdictAt: this.#lastVerdictMs ? new Date(this.#lastVerdictMs).toISOString() : null,
      vips: this.#o.vips(),
      lastWriteError: this.#lastWriteError ?? null,
      localFault: this.#localFault ?? null,
    };
  }

  async #probeLoop(): Promise<void> {
    const { clock, intervalMs } = this.#o;
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      const started = clock.now();
      // A probe that throws is a bug on this side, never a verdict on the apiserver.
      // A timeout our own stalled loop caused is ours, not the apiserver's.
      const result = await probeJudgingStall(() =>
        this.#o.probe(signal).catch((err: unknown) => failedProbe('local', 0, `the probe threw: ${describeError(err)}`)),
      );
      if (signal.aborted) return;
      await this.#handle(result);
      try {
        await clock.sleep(Math.max(0, intervalMs - (clock.now() - started)), signal);
      } catch {
        return;
      }
    }
  }

  async #heartbeatLoop(): Promise<void> {
    const signal = this.#stop.signal;
    for (;;) {
      try {
        await this.#o.clock.sleep(this.#o.heartbeatMs, signal);
      } catch {
        return;
      }
      if (this.#verdict) await this.#publishAll('beat');
    }
  }

  async #handle(result: ProbeResult): Promise<void> {
    const now = this.#o.clock.now();
    this.#lastProbe = result;
    this.#lastVerdictMs = now;
    this.#o.metrics.observeProbe(result, now);
    this.#logStreak(result);
    const { tracker, transition } = applyProbe(this.#tracker, result, this.#o.hysteresis);
    this.#tracker = tracker;
    if (!transition) return;
    this.#verdict = { state: transition.to, sinceMs: now, reason: transition.reason, generation: (this.#verdict?.generation ?? 0) + 1 };
    this.#o.metrics.transition(transition.to);
    this.#o.metrics.setState(this.#o.vips(), transition.to);
    const log = transition.to === 'up' ? this.#o.log.info.bind(this.#o.log) : this.#o.log.warn.bind(this.#o.log);
    log({ from: transition.from, to: transition.to, reason: transition.reason, probe: result, vips: this.#o.vips() }, `apiserver is ${transition.to}`);
    await this.#publishAll();
  }

  /** A failed probe is logged once per streak, and the end of a streak once; local faults have their own streak. */
  #logStreak(r: ProbeResult): void {
    if (r.reason === 'local') {
      if (this.#localFault === undefined) {
        this.#o.log.error(
          { reason: r.reason, detail: r.detail },
          "health probe hit a local fault (not the apiserver's): the verdict is kept until probes run again",
        );
      }
      this.#localFault = r.detail;
      return;
    }
    if (this.#localFault !== undefined) {
      this.#o.log.info('health probes run again: the local fault is over');
      this.#localFault = undefined;
    }
    if (!r.ok && !this.#failStreakLogged) {
      this.#failStreakLogged = true;
      this.#o.log.warn(
        { reason: r.reason, status: r.status, detail: r.detail, latencyMs: r.latencyMs },
        'health probe failed; further failures in this streak are counted, not logged',
      );
    } else if (r.ok && this.#failStreakLogged) {
      this.#failStreakLogged = false;
      this.#o.log.info({ afterFailures: this.#tracker.failures, latencyMs: r.latencyMs }, 'health probe succeeded again');
    }
  }

  #publishAll(kind: 'verdict' | 'beat' = 'verdict'): Promise<void> {
    this.#writeQueue = this.#writeQueue.then(() => this.#writeAll(kind));
    return this.#writeQueue;
  }

  async #writeAll(kind: 'verdict' | 'beat'): Promise<void> {
    const v = this.#verdict;
    if (!v) return;
    const vips = this.#o.vips();
    const removed = this.#published.filter((p) => !vips.includes(p));
    const heartbeat = new Date(this.#lastVerdictMs).toISOString();
    const record = (state: PublishedState, reason: string): StateRecord => ({
      state,
      since: new Date(v.sinceMs).toISOString(),
      reason,
      pid: this.#o.pid,
      generation: v.generation,
      heartbeat,
    });
    try {
      const { files } = this.#o;
      // A beat for a VIP published before only says "still alive"; a VIP new to the set needs its state file.
      for (const vip of vips) {
        if (kind === 'beat' && files.beat && this.#published.includes(vip)) await files.beat(vip, record(v.state, v.reason));
        else await files.publish(vip, record(v.state, v.reason));
      }
      // A VIP that left the set is no longer vouched for: down is the safe last word.
      for (const vip of removed) {
        await this.#o.files.publish(vip, record('down', 'no longer a VIP of this watcher'));
        this.#o.metrics.forgetVip(vip);
      }
      this.#published = vips;
      this.#o.metrics.setState(vips, v.state);
      if (this.#lastWriteError) this.#o.log.info('state files written again');
      this.#lastWriteError = undefined;
    } catch (err) {
      const msg = describeError(err);
      if (msg !== this.#lastWriteError) this.#o.log.error({ err: msg }, 'cannot write state files; retrying at the next heartbeat');
      this.#lastWriteError = msg;
      this.#o.metrics.writeError();
    }
  }
}
