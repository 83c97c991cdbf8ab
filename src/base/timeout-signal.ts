// An AbortSignal that aborts when a timer fires or when a parent signal aborts, whichever comes
// first, for work that is nearly always done before its timer: a reconcile's deadline
// (controllers/runtime/deadline.ts) and an OpenStack attempt's timeout (clients/openstack/
// http-sender.ts). One controller of its own with one listener on the parent, both let go by
// `clear`, instead of AbortSignal.timeout or a sleep joined by AbortSignal.any: a composite signal
// makes every listener later added to it (one per HTTP request) follow its sources again, and a
// cleared sleep builds an AbortError with a stack (docs/design/operator-start.md).

export interface TimeoutSignal {
  /** Aborts with the parent's reason when the parent aborts, or with `reason()` when the timer fires; after clear, neither. */
  readonly signal: AbortSignal;
  /** True once the timer fired first (not the parent). */
  readonly expired: boolean;
  /** Cancels the timer and lets go of the parent. Call it when the work is done. */
  clear(): void;
}

/**
 * startTimer(fire) starts the timer and returns its cancel; the caller picks the clock (an injected
 * one, or an unref'd setTimeout) and the reason the signal aborts with when it fires.
 */
export function timeoutSignal(startTimer: (fire: () => void) => () => void, reason: () => unknown, parent?: AbortSignal): TimeoutSignal {
  const own = new AbortController();
  let expired = false;
  const onParent = (): void => own.abort(parent!.reason);
  const cancel = startTimer(() => {
    if (own.signal.aborted) return;
    expired = true;
    parent?.removeEventListener('abort', onParent);
    own.abort(reason());
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
