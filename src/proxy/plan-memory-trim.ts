// When to give freed malloc memory back to the kernel. glibc's arenas keep what a burst of
// connections freed (TLS and libuv allocations, the C relay's slots), so private memory stays at
// its peak after the load has passed (bench --soak: the part of private memory that is neither V8
// heap nor external). Trimming under load would only hand back pages that are faulted in again a
// moment later, so the trim waits for the first quiet interval after a busy one. Pure.

export interface TrimState {
  /** Connections accepted in all at the last tick. */
  accepted: number;
  /** An interval since the last trim took more than the quiet count. */
  busySinceTrim: boolean;
}

/** Accepted connections per interval at or below which the proxy counts as quiet. */
export const QUIET_CONNECTIONS_PER_INTERVAL = 10;

export function planTrim(state: TrimState, accepted: number, quiet = QUIET_CONNECTIONS_PER_INTERVAL): { trim: boolean; next: TrimState } {
  const busy = accepted - state.accepted > quiet;
  if (busy) return { trim: false, next: { accepted, busySinceTrim: true } };
  return { trim: state.busySinceTrim, next: { accepted, busySinceTrim: false } };
}
