// A deadline as an AbortSignal on the injected clock (so tests with a manual clock see it fire when
// they advance time), joined with a parent signal. Always call the returned `clear` when the work is
// done: it cancels the timer, so a finished reconcile leaves nothing pending.
import type { Clock } from '../../base/clock.ts';
import { KubewardError } from '../../base/errors.ts';

export interface Deadline {
  /** Aborts when the parent aborts (its reason) or the deadline passes (an E_TIMEOUT KubewardError). */
  signal: AbortSignal;
  /** True once the deadline itself fired (not the parent). */
  readonly expired: boolean;
  clear(): void;
}

export function deadline(clock: Clock, ms: number, what: string, parent?: AbortSignal): Deadline {
  const own = new AbortController();
  const timer = new AbortController();
  let expired = false;
  clock.sleep(ms, timer.signal).then(
    () => {
      expired = true;
      own.abort(new KubewardError('E_TIMEOUT', `${what} did not finish within ${ms} ms`));
    },
    () => undefined,
  );
  const signal = parent ? AbortSignal.any([parent, own.signal]) : own.signal;
  return {
    signal,
    get expired() {
      return expired;
    },
    clear: () => timer.abort(),
  };
}
