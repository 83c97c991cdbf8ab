// A deadline as an AbortSignal on the injected clock (so tests with a manual clock see it fire when
// they advance time), joined with a parent signal. Always call the returned `clear` when the work is
// done: it cancels the timer and lets go of the parent, so a finished reconcile leaves nothing pending.
//
// Built for the operator's start (docs/design/operator-start.md): two deadlines per
// cluster and round, nearly all cleared rather than fired. The timer is the clock's plain timer
// (no AbortController, no promise, no AbortError with a stack when it is cleared), and the parent is
// followed as base/timeout-signal.ts follows it.
import { after, type Clock } from '../../base/clock.ts';
import { KubewardError } from '../../base/errors.ts';
import { timeoutSignal, type TimeoutSignal } from '../../base/timeout-signal.ts';

/** Aborts when the parent aborts (its reason) or the deadline passes (an E_TIMEOUT KubewardError); after clear, neither. */
export type Deadline = TimeoutSignal;

export function deadline(clock: Clock, ms: number, what: string, parent?: AbortSignal): Deadline {
  return timeoutSignal(
    (fire) => after(clock, ms, fire),
    () => new KubewardError('E_TIMEOUT', `${what} did not finish within ${ms} ms`),
    parent,
  );
}
