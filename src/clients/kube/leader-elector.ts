// Leader election on a coordination.k8s.io/v1 Lease: one replica holds it and renews it every retry
// period; the others poll and take over once the record has not changed for a lease duration.
// Writes are PUTs with the resourceVersion read, so two candidates can never both win a round.
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

export class LeaderElector {
  readonly #o: Required<Omit<LeaderElectorOptions, 'onStartedLeading' | 'onStoppedLeading'>> & LeaderElectorOptions;
  readonly #abort = new AbortController();
  #observed: ObservedRecord | undefined;
  #leading = false;
  #lastRenewMs = 0;
  #holder: string | undefined;
  #running: Promise<void> | undefined;

  constructor(opts: LeaderElectorOptions) {
    this.#o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...opts };
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  status(): { identity: string; leader: boolean; holder?: string } {
    return { identity: this.#o.identity, leader: this.#leading, holder: this.#holder };
  }

  start(): void {
    this.#running ??= this.#loop();
  }

  /** Stops campaigning; a leader releases the lease so a standby takes over at once. */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    this.#abort.abort(new Error('leader election stopped'));
    await this.#running;
    if (this.#leading && opts.release !== false) await this.#release();
    if (this.#leading) {
      this.#leading = false;
      this.#o.onStoppedLeading();
    }
  }

  async #loop(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      const ok = await this.#tryAcquireOrRenew().catch((err: unknown) => {
        this.#o.log.warn({ lease: this.#o.name, err: describeError(err) }, 'lease update failed');
        return false;
      });
      if (signal.aborted) break;
      const now = this.#o.clock.now();
      if (ok) {
        this.#lastRenewMs = now;
        if (!this.#leading) {
          this.#leading = true;
          this.#o.log.info({ lease: this.#o.name, identity: this.#o.identity }, 'became leader');
          this.#o.onStartedLeading();
        }
      } else if (this.#leading && now - this.#lastRenewMs >= this.#o.renewDeadlineMs) {
        this.#leading = false;
        this.#o.log.warn({ lease: this.#o.name, identity: this.#o.identity }, 'could not renew the lease in time; stepping down');
        this.#o.onStoppedLeading();
      }
      await this.#o.clock.sleep(jitter(this.#o.retryPeriodMs, 0.1), signal).catch(() => undefined);
    }
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { leases, namespace, name, identity, clock } = this.#o;
    const now = clock.now();
    let lease: Lease | undefined;
    try {
      lease = await leases.get(namespace, name);
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
      const written = d.kind === 'create'
        ? await leases.create({ metadata: { name, namespace }, spec })
        : await leases.replace({ ...lease!, spec });
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
      const lease = await leases.get(namespace, name);
      if (lease.spec.holderIdentity !== identity) return;
      await leases.replace({ ...lease, spec: { ...lease.spec, holderIdentity: null, leaseDurationSeconds: 1, renewTime: microTime(clock.now()) } });
    } catch (err) {
      this.#o.log.warn({ lease: name, err: describeError(err) }, 'could not release the lease');
    }
  }
}
