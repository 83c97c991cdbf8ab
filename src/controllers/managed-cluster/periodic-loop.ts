// Runs a cycle at once and then again 1.0–1.5 × interval after each one ends (Kubernikus's sliding
// JitterUntil with factor 0.5), until the signal aborts. A failing cycle is logged and retried on schedule.
import type { Clock } from '../../base/clock.ts';
import { describeError } from '../../base/errors.ts';
import type { Logger } from '../../base/logger.ts';

export interface PeriodicLoopOptions {
  name: string;
  intervalMs: number;
  clock: Clock;
  log: Logger;
  signal: AbortSignal;
  random?: () => number;
}

/** Resolves when the signal aborts (after the cycle in flight, if any, returns). */
export async function runPeriodically(cycle: (signal: AbortSignal) => Promise<unknown>, o: PeriodicLoopOptions): Promise<void> {
  const random = o.random ?? Math.random;
  while (!o.signal.aborted) {
    try {
      await cycle(o.signal);
    } catch (err) {
      if (o.signal.aborted) return;
      o.log.warn({ loop: o.name, err: describeError(err) }, 'cycle failed; trying again at the next interval');
    }
    try {
      await o.clock.sleep(Math.round(o.intervalMs * (1 + 0.5 * random())), o.signal);
    } catch {
      return;
    }
  }
}
