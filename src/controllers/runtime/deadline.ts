// A deadline as an AbortSignal on the injected clock (so tests with a manual clock see it fire when
// they advance time), joined with a parent signal. Always call the returned `clear` when the work is
// done: it cancels the timer and lets go of the parent, so a finished reconcile leaves nothing pending.
//
// Built for the operator's start (issue 17, docs/operator-scale.md "session 6"): two deadlines per
// cluster and round, nearly all cleared rather than fired. The timer is the clock's plain timer
// (no AbortController, no promise, no AbortError with a stack when it is cleared), and the parent is
// followed by one listener instead of AbortSignal.any: every listener later added to a composite
// signal (one per OpenStack and Kubernetes call) made it follow its sources again.
import { after, type Clock } from '../../base/clock.ts';
import { KubewardError } from '../../base/errors.ts';

export interface Deadline {
  /** Aborts when the parent aborts (its reason) or the deadline passes (an E_TIMEOUT KubewardError); after clear, neither. */
  signal: AbortSignal;
  /** True once the deadline itself fired (not the parent). */
  readonly expired: boolean;
  clear(): void;
}

export function deadline(clock: Clock, ms: number, what: string, parent?: AbortSignal): Deadline {
  const own = new AbortController();
  let expired = false;
  const onParent = (): void => own.abort(parent!.reason);
  const cancel = after(clock, ms, () => {
    if (own.signal.aborted) return;
    expired = true;
    parent?.removeEventListener('abort', onParent);
    own.abort(new KubewardError('E_TIMEOUT', `${what} did not finish within ${ms} ms`));
  });
  if (parent?.aborted) {
    cancel();
    own.abort(parent.reason);
  } else parent?.addEventListener('abort', onParent, { once: true });
  return {
    signal: own.signal,
    get expired() {
      return expired;
    },
    clear: () => {
      cancel();
      parent?.removeEventListener('abort', onParent);
    },
  };
}
