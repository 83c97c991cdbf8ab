// A work queue of keys with one reconcile in flight per key: a key added while it is being
// processed is marked dirty and comes back once, after the current run is done. Delayed adds keep
// the earliest deadline per key; failures count per key for the backoff.
import { after, type Clock } from '../../base/clock.ts';
import { backoffDelayMs, DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.ts';

export class WorkQueue {
  readonly #clock: Clock;
  readonly #backoff: BackoffPolicy;
  readonly #queue: string[] = [];
  readonly #queued = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #dirty = new Set<string>();
  readonly #delayed = new Map<string, { at: number; cancel: () => void }>();
  readonly #failures = new Map<string, number>();
  #waiters: ((key: string | undefined) => void)[] = [];
  #shutDown = false;

  constructor(clock: Clock, backoff: BackoffPolicy = DEFAULT_BACKOFF) {
    this.#clock = clock;
    this.#backoff = backoff;
  }

  add(key: string): void {
    if (this.#shutDown) return;
    if (this.#processing.has(key)) {
      this.#dirty.add(key);
      return;
    }
    if (this.#queued.has(key)) return;
    const waiter = this.#waiters.shift();
    if (waiter) {
      this.#processing.add(key);
      waiter(key);
      return;
    }
    this.#queued.add(key);
    this.#queue.push(key);
  }

  /** Adds key after delayMs; an earlier pending deadline for the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.#shutDown) return;
    if (delayMs <= 0) return this.add(key);
    const at = this.#clock.now() + delayMs;
    const pending = this.#delayed.get(key);
    if (pending && pending.at <= at) return;
    pending?.cancel();
    // The clock's plain timer: every key of the operator waits here between its rounds (no
    // AbortController and promise chain per wait: docs/design/operator-start.md).
    const entry = { at, cancel: (): void => undefined };
    entry.cancel = after(this.#clock, delayMs, () => {
      if (this.#delayed.get(key) === entry) this.#delayed.delete(key);
      this.add(key);
    });
    this.#delayed.set(key, entry);
  }

  /** Re-adds a failed key after its backoff; returns the delay used. */
  addWithBackoff(key: string): number {
    const n = (this.#failures.get(key) ?? 0) + 1;
    this.#failures.set(key, n);
    const delay = backoffDelayMs(n, this.#backoff);
    this.addAfter(key, delay);
    return delay;
  }

  /** Clears the failure count of a key (after a success). */
  forget(key: string): void {
    this.#failures.delete(key);
  }

  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** The next key to process, or undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    const key = this.#queue.shift();
    if (key !== undefined) {
      this.#queued.delete(key);
      this.#processing.add(key);
      return Promise.resolve(key);
    }
    if (this.#shutDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Marks key done; a key added meanwhile goes back in the queue. */
  done(key: string): void {
    this.#processing.delete(key);
    if (this.#dirty.delete(key)) this.add(key);
  }

  /** Keys waiting now (not counting delayed ones or those in flight). */
  get depth(): number {
    return this.#queue.length;
  }

  /** Nothing queued and nothing in flight (delayed keys may still come). */
  get idle(): boolean {
    return this.#queue.length === 0 && this.#processing.size === 0;
  }

  shutDown(): void {
    this.#shutDown = true;
    for (const d of this.#delayed.values()) d.cancel();
    this.#delayed.clear();
    for (const w of this.#waiters.splice(0)) w(undefined);
  }
}
