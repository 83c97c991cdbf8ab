// When an OpenStack request is tried again, and how long to wait first. Pure.

export interface RetryPolicy {
  /** Tries in total, including the first; 1 disables retries. */
  maxAttempts: number;
  /** The first backoff; it doubles per retry. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Per attempt, until the whole body is read; a hung service counts as a timeout. */
  attemptTimeoutMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 8000, attemptTimeoutMs: 30_000 };

export type AttemptOutcome = { kind: 'status'; status: number } | { kind: 'timeout' } | { kind: 'network' };

/**
 * 5xx, timeouts and connection failures are retried; a 4xx never is (the request itself is wrong, or
 * the state says no). POST and PATCH are retried only when the caller declares them idempotent: a
 * create that timed out may have happened. The other methods are, unless the caller declares one
 * not idempotent: a full-list PUT computed from an earlier read, sent again seconds later, would
 * write that stale list over what others changed meanwhile; its caller reads again instead.
 */
export function isRetryable(outcome: AttemptOutcome, method: string, idempotent: boolean | undefined): boolean {
  if (outcome.kind === 'status' && outcome.status < 500) return false;
  return idempotent ?? (method !== 'POST' && method !== 'PATCH');
}

/**
 * The wait before retry `retry` (1-based) of one request: exponential with "equal jitter", half fixed,
 * half random, so retries from many clients spread. Not the work queue's `backoffDelayMs`
 * (controllers/runtime/backoff.ts), which spaces whole reconciles of a failing key, without jitter.
 */
export function retryDelayMs(retry: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
