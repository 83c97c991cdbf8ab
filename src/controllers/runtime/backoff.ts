// Per-key exponential backoff, pure: the delay before the n-th retry of a failing key.

export interface BackoffPolicy {
  /** Delay after the first failure (default 5 s). */
  baseMs: number;
  /** The delay never grows past this (default 5 min). */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 5_000, maxMs: 300_000 };

/** failures counts consecutive failures including the one just seen (1 → baseMs). */
export function backoffDelayMs(failures: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  if (failures <= 0) return 0;
  // 2 ** 30 is already far beyond any sane maxMs; capping the exponent avoids Infinity.
  return Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(failures - 1, 30));
}
