// The watcher's verdict: consecutive-result counting with separate rise and fall thresholds, and a
// fast path for a refused connection. Pure: a tracker and a probe result in, the next tracker out.
import type { ProbeReason, ProbeResult } from '../probe/probe-result.ts';

export type HealthState = 'unknown' | 'up' | 'down';

export interface HysteresisOptions {
  /** Consecutive successes that declare up (at least 1). */
  rise: number;
  /** Consecutive failures that declare down (at least 1). */
  fall: number;
  /** A refused connection means the process is gone: declare down at once instead of counting. */
  fastDownOnRefused: boolean;
}

export interface Tracker {
  state: HealthState;
  successes: number;
  failures: number;
}

export interface Transition {
  from: HealthState;
  to: 'up' | 'down';
  /** Why, in words: "8 consecutive failures (last: timeout)". */
  reason: string;
  lastReason: ProbeReason;
}

export const initialTracker: Tracker = { state: 'unknown', successes: 0, failures: 0 };

/**
 * A local fault (reason local: no fds, unreadable token) is neither a success nor a failure: the
 * probe did not reach the apiserver, so the counts and the state stay as they are.
 */
export function applyProbe(t: Tracker, r: ProbeResult, opts: HysteresisOptions): { tracker: Tracker; transition?: Transition } {
  if (r.reason === 'local') return { tracker: t };
  if (r.ok) {
    const successes = t.successes + 1;
    if (t.state !== 'up' && successes >= opts.rise) {
      const reason = `${successes} consecutive successful probe${successes > 1 ? 's' : ''} (${r.detail})`;
      return { tracker: { state: 'up', successes, failures: 0 }, transition: { from: t.state, to: 'up', reason, lastReason: r.reason } };
    }
    return { tracker: { state: t.state, successes, failures: 0 } };
  }
  const failures = t.failures + 1;
  if (t.state === 'down') return { tracker: { state: 'down', successes: 0, failures } };
  if (opts.fastDownOnRefused && r.reason === 'refused') {
    const reason = `connection refused: the apiserver process is gone (${r.detail})`;
    return { tracker: { state: 'down', successes: 0, failures }, transition: { from: t.state, to: 'down', reason, lastReason: r.reason } };
  }
  if (failures >= opts.fall) {
    const reason = `${failures} consecutive failed probe${failures > 1 ? 's' : ''} (last: ${r.reason}: ${r.detail})`;
    return { tracker: { state: 'down', successes: 0, failures }, transition: { from: t.state, to: 'down', reason, lastReason: r.reason } };
  }
  return { tracker: { state: t.state, successes: 0, failures } };
}
