// The last check before a call that changes something leaves the process: a fence (the operator's
// lease, seen by this replica's own clock) that throws to keep the call from being sent. Clients run
// it at the moment of sending, after token fetches, retries' backoff and every other await, so a
// call that would go out late, after the lease ran out, is not sent at all.

/** What is about to be sent. */
export interface FencedCall {
  /** "nova", "neutron", "keystone", "kubernetes"... */
  service: string;
  method: string;
  path: string;
}

export interface CallFence {
  /** Returns when the call may go; throws (the reason it may not) otherwise. */
  check(call: FencedCall): void;
}

/** Methods that only read: never fenced. */
export function changesSomething(method: string): boolean {
  const m = method.toUpperCase();
  return m !== 'GET' && m !== 'HEAD' && m !== 'OPTIONS';
}
