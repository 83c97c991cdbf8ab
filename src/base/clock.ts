// Time as a port, so decisions can be tested with any "now" and long timeouts run in milliseconds.
import { setTimeout as sleepTimer } from 'node:timers/promises';

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after ms, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls fn after ms unless the returned function was called first. Optional: `after` falls back to
   * sleep. A timer that is usually cancelled (a deadline, a slot) costs no AbortController, no
   * promise chain and no AbortError with a stack this way.
   */
  timer?(ms: number, fn: () => void): () => void;
}

/** Aborts the fallback timer of `after`: nobody reads it (its rejection is dropped), so one made once serves. */
const CANCELLED: Error = Object.freeze(new Error('timer cancelled')) as Error;

/** Calls fn after ms on the clock unless the returned cancel is called first (idempotent). */
export function after(clock: Clock, ms: number, fn: () => void): () => void {
  if (clock.timer) return clock.timer(ms, fn);
  const abort = new AbortController();
  clock.sleep(ms, abort.signal).then(fn, () => undefined);
  return () => abort.abort(CANCELLED);
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    await sleepTimer(ms, undefined, signal ? { signal } : undefined);
  },
  timer: (ms, fn) => {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};

/** A clock that moves only when told to; sleepers wake when now passes their deadline. */
export class ManualClock implements Clock {
  #now: number;
  #sleepers: { until: number; resolve: () => void }[] = [];

  constructor(startMs = 0) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const sleeper = { until: this.#now + ms, resolve };
      this.#sleepers.push(sleeper);
      signal?.addEventListener(
        'abort',
        () => {
          this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  timer(ms: number, fn: () => void): () => void {
    let live = true;
    // Called a microtask after advance(), as a sleeper's continuation runs.
    const sleeper = { until: this.#now + ms, resolve: () => queueMicrotask(() => live && fn()) };
    this.#sleepers.push(sleeper);
    return () => {
      if (!live) return;
      live = false;
      this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
    };
  }

  advance(ms: number): void {
    this.#now += ms;
    const due = this.#sleepers.filter((s) => s.until <= this.#now);
    this.#sleepers = this.#sleepers.filter((s) => s.until > this.#now);
    for (const s of due) s.resolve();
  }
}

/** A random spread of ±fraction around ms, so that many nodes do not act in the same instant. */
export function jitter(ms: number, fraction = 0.1, random: () => number = Math.random): number {
  return Math.max(0, Math.round(ms * (1 + fraction * (2 * random() - 1))));
}
