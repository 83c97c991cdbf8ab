// Slow start: the share of new connections an upstream that just came back may take, ramping up
// linearly, so a recovered apiserver is not handed every new connection (and relist) at once. Pure.

/** The share an upstream starts with: never zero, so it gets some traffic and proves itself (Envoy's min_weight_percent). */
export const MIN_SLOW_START_SHARE = 0.1;

/**
 * The fraction (MIN_SLOW_START_SHARE..1) of the connections the picker would give this upstream
 * that it actually gets, `now - since` ms after it came back. No start time, or a slowStartMs of
 * 0 or less, means no slow start: 1.
 */
export function slowStartShare(since: number | undefined, now: number, slowStartMs: number): number {
  if (since === undefined || slowStartMs <= 0) return 1;
  const elapsed = now - since;
  if (elapsed >= slowStartMs) return 1;
  return Math.max(MIN_SLOW_START_SHARE, elapsed / slowStartMs);
}

/** True while the upstream is still ramping up. */
export function isSlowStarting(since: number | undefined, now: number, slowStartMs: number): boolean {
  return slowStartShare(since, now, slowStartMs) < 1;
}
