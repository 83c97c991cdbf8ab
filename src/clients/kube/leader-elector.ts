// Leader election on a coordination.k8s.io/v1 Lease: one replica holds it and renews it every retry
// period; the others poll and take over once the record has not changed for a lease duration.
// Writes are PUTs with the resourceVersion read, so two candidates can never both win a round.
// A leader's term ends the moment its renew deadline passes, even while a lease call hangs: every
// lease call is bounded by what is left of the deadline (not the client's 30 s), a timer on the
// clock steps down at the deadline, and `fence` (aborted at that instant) is what controllers pass
// to, and check before, every destructive call. Deadlines count from when the renew was *sent*, so
// this replica stops acting before any standby (which counts from when it saw the renew) takes over.
import type { Clock } from '../../base/clock.ts';
import { jitter } from '../../base/clock.ts';
import { describeError } from '../../base/errors.ts';
import type { Logger } from '../../base/logger.ts';
import { isConflict, isNotFound } from './kube-api-error.ts';
import type { Lease } from './kube-types.ts';
import { decideLease, microTime, observeLease, type ObservedRecord } from './lease-decision.ts';
import type { ResourceClient } from './resource-client.ts';

export interface LeaderElectorOptions {
  leases: ResourceClient<Lease>;
  namespace: string;
  name: string;
  identity: string;
  /** How long a silent holder keeps the lease (default 15 s). */
  leaseDurationMs?: number;
  /** A leader that could not renew for this long steps down (default 10 s; less than the lease duration). */
  renewDeadlineMs?: number;
  /** Time between attempts (default 2 s). */
  retryPeriodMs?: number;
  clock: Clock;
  log: Logger;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
}

const NOT_LEADING: AbortSignal = AbortSignal.abort(new Error('not the leader'));

export class LeaderElector {
  readonly #o: Required<Omit<LeaderElectorOptions, 'onStartedLeading' | 'onStoppedLeading'>> & LeaderElectorOptions;
  readonly #abort = new AbortController();
  #observed: ObservedRecord | undefined;
  #leading = false;
  #lastRenewMs = 0;
  #holder: string | undefined;
  #running: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  /** Aborted when the current term ends (deadline passed, lease lost, stop). */
  #term: AbortController | undefined;
  /** Cancels the pending deadline timer when a renew moves the deadline. */
  #watchdog: AbortController | undefined;

  constructor(opts: LeaderElectorOptions) {
    this.#o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...opts };
  }

  /** Leading, and the renew deadline has not passed (checked against the clock, not only the timer). */
  get isLeader(): boolean {
    return this.#leading && this.#o.clock.now() - this.#lastRenewMs < this.#o.renewDeadlineMs;
  }

  /**
   * The current term's fence: aborted the instant this replica stops leading (an already-aborted
   * signal when it does not lead). Pass it to destructive calls and check it before each one.
   */
  get fence(): AbortSignal {
    return this.#leading && this.#term ? this.#term.signal : NOT_LEADING;
  }

  /**
   * Returns while this replica leads and its renew deadline has not passed by the clock; otherwise
   * ends the term at once (when the watchdog timer is late: a blocked event loop, a starved process)
   * and throws the reason. The check destructive calls make just before they are sent.
   */
  assertLeading(): void {
    if (this.isLeader) return;
    const term = this.#term;
    if (this.#leading) this.#stepDown('the renew deadline passed (seen by the clock before a call)');
    throw term?.signal.aborted ? term.signal.reason : new Error('leadership lost: this replica does not hold the lease');
  }

  status(): { identity: string; leader: boolean; holder?: string } {
    return { identity: this.#o.identity, leader: this.#leading, holder: this.#holder };
  }

  start(): void {
    this.#running ??= this.#loop();
  }

  /**
   * Stops campaigning; a leader releases the lease (unless release is false) so a standby takes over
   * at once. Idempotent: later calls join the first (and its release choice).
   */
  close(opts: { release?: boolean } = {}): Promise<void> {
    return (this.#closing ??= this.#close(opts));
  }

  async #close(opts: { release?: boolean }): Promise<void> {
    this.#abort.abort(new Error('leader election stopped'));
    await this.#running;
    // The fence falls before the lease is released: a standby may take over the instant it is free.
    const wasLeading = this.#leading;
    this.#stepDown('leader election stopped');
    if (wasLeading && opts.release !== false) await this.#release();
  }

  async #loop(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      const sentMs = this.#o.clock.now();
      const ok = await this.#tryAcquireOrRenew(sentMs).catch((err: unknown) => {
        this.#o.log.warn({ lease: this.#o.name, err: describeError(err) }, 'lease update failed');
        return false;
      });
      if (signal.aborted) break;
      if (ok) this.#renewed(sentMs);
      else if (this.#leading && this.#o.clock.now() - this.#lastRenewMs >= this.#o.renewDeadlineMs) this.#stepDown('could not renew the lease in time');
      await this.#o.clock.sleep(jitter(this.#o.retryPeriodMs, 0.1), signal).catch(() => undefined);
    }
  }

  /** A renew (or acquisition) sent at sentMs succeeded: the deadline moves to sentMs + renewDeadline. */
  #renewed(sentMs: number): void {
    const o = this.#o;
    if (sentMs + o.renewDeadlineMs <= o.clock.now()) return; // it landed, but too late to act on
    this.#lastRenewMs = sentMs;
    if (!this.#leading) {
      this.#leading = true;
      this.#term = new AbortController();
      o.log.info({ lease: o.name, identity: o.identity }, 'became leader');
      o.onStartedLeading();
    }
    this.#watchdog?.abort();
    const watchdog = (this.#watchdog = new AbortController());
    const due = sentMs + o.renewDeadlineMs - o.clock.now();
    o.clock.sleep(due, watchdog.signal).then(
      () => this.#stepDown('could not renew the lease in time'),
      () => undefined,
    );
  }

  /** Ends the term at once: the fence aborts (in-flight destructive calls with it), then the callback. */
  #stepDown(why: string): void {
    this.#watchdog?.abort();
    this.#watchdog = undefined;
    if (!this.#leading) return;
    this.#leading = false;
    this.#term?.abort(new Error(`leadership lost: ${why}`));
    this.#o.log.warn({ lease: this.#o.name, identity: this.#o.identity, reason: why }, 'stepping down');
    this.#o.onStoppedLeading();
  }

  /**
   * Bounds for one lease call: a leader's calls end when its deadline does (the term's fence aborts
   * them), a candidate's after one renew deadline; both stop when the election stops.
   */
  #callBounds(): { signal: AbortSignal; timeoutMs: number } {
    const o = this.#o;
    const signals = [this.#abort.signal];
    let timeoutMs = o.renewDeadlineMs;
    if (this.#leading && this.#term) {
      signals.push(this.#term.signal);
      timeoutMs = Math.max(1, this.#lastRenewMs + o.renewDeadlineMs - o.clock.now());
    }
    return { signal: AbortSignal.any(signals), timeoutMs };
  }

  async #tryAcquireOrRenew(now: number): Promise<boolean> {
    const { leases, namespace, name, identity } = this.#o;
    let lease: Lease | undefined;
    try {
      lease = await leases.get(namespace, name, this.#callBounds());
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (lease) this.#observed = observeLease(this.#observed, lease, now);
    this.#holder = lease?.spec.holderIdentity ?? undefined;
    const d = decideLease(lease, this.#observed, identity, now);
    if (d.kind === 'wait') return false;
    const spec: Lease['spec'] = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.#o.leaseDurationMs / 1000),
      renewTime: microTime(now),
      acquireTime: d.kind === 'renew' ? lease?.spec.acquireTime : microTime(now),
      leaseTransitions: (lease?.spec.leaseTransitions ?? 0) + (d.kind === 'take-over' ? 1 : 0),
    };
    try {
      const written =
        d.kind === 'create'
          ? await leases.create({ metadata: { name, namespace }, spec }, this.#callBounds())
          : await leases.replace({ ...lease!, spec }, this.#callBounds());
      this.#observed = observeLease(undefined, written, now);
      this.#holder = identity;
      return true;
    } catch (err) {
      // Someone else wrote first (or created it): not an error, just not us this round.
      if (isConflict(err)) return false;
      throw err;
    }
  }

  async #release(): Promise<void> {
    const { leases, namespace, name, identity, clock } = this.#o;
    try {
      const bounds = { timeoutMs: this.#o.renewDeadlineMs };
      const lease = await leases.get(namespace, name, bounds);
      if (lease.spec.holderIdentity !== identity) return;
      await leases.replace({ ...lease, spec: { ...lease.spec, holderIdentity: null, leaseDurationSeconds: 1, renewTime: microTime(clock.now()) } }, bounds);
    } catch (err) {
      this.#o.log.warn({ lease: name, err: describeError(err) }, 'could not release the lease');
    }
  }
}
