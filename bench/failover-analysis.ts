// Turns the client's log of one failover run into numbers: failed and slow requests, and when new
// connections stopped reaching the affected backend as far as the client can tell. Pure.
import type { ProxyPeer } from './bench-stats.ts';

export const SCENARIOS = ['kill', 'hang', 'readyz-503'] as const;
export type Scenario = (typeof SCENARIOS)[number];

/** One client connection (one request), times relative to the event (kill, stop, readyz 503). */
export interface RequestRecord {
  startMs: number;
  latencyMs: number;
  /** The backend that answered (its name is the response body). */
  backend?: string;
  /** Why the request failed: reset, refused, timeout, bad-response, ... */
  error?: string;
}

/** When new connections stopped reaching the backend: a time after the event, never affected, or still at the end. */
export type StopTime = number | 'none' | 'not-within-window';

export interface FailoverSample {
  scenario: Scenario;
  peer: ProxyPeer;
  round: number;
  windowMs: number;
  /** Requests started at or after the event. */
  requests: number;
  failed: number;
  slow: number;
  /** Requests in flight at the event that failed (no proxy can save those on a killed backend). */
  inFlightLost: number;
  stopMs: StopTime;
  errors: Record<string, number>;
  /** When the proxy itself marked the backend down, after the event (kubeward's /status; others do not say). */
  markedDownMs?: number;
}

export interface AnalyzeOptions {
  /** Name of the backend the event hit. */
  affected: string;
  windowMs: number;
  /** A request slower than this paid for a retry or a hang (default 1000). */
  slowMs?: number;
  /** An affected request this close to the end of the window means it never stopped (default 1000). */
  tailMs?: number;
}

type Counts = Pick<FailoverSample, 'requests' | 'failed' | 'slow' | 'inFlightLost' | 'stopMs' | 'errors'>;

/**
 * A new connection "reached" the affected backend when it was answered by it, failed, or was slowed
 * past slowMs (a connect retried after a timeout, a hang): a retry that costs the client nothing is
 * invisible here, which is the point: it did not hurt.
 */
export function analyzeFailover(records: readonly RequestRecord[], opts: AnalyzeOptions): Counts {
  const slowMs = opts.slowMs ?? 1000;
  const tailMs = opts.tailMs ?? 1000;
  const after = records.filter((r) => r.startMs >= 0 && r.startMs <= opts.windowMs);
  const isSlow = (r: RequestRecord): boolean => r.error === undefined && r.latencyMs > slowMs;
  const errors: Record<string, number> = {};
  for (const r of after) if (r.error !== undefined) errors[r.error] = (errors[r.error] ?? 0) + 1;
  let last = -1;
  for (const r of after) {
    if (r.error !== undefined || isSlow(r) || r.backend === opts.affected) last = Math.max(last, r.startMs);
  }
  let stopMs: StopTime;
  if (last < 0) stopMs = 'none';
  else if (last >= opts.windowMs - tailMs) stopMs = 'not-within-window';
  else stopMs = last;
  return {
    requests: after.length,
    failed: after.filter((r) => r.error !== undefined).length,
    slow: after.filter(isSlow).length,
    inFlightLost: records.filter((r) => r.startMs < 0 && r.startMs + r.latencyMs >= 0 && r.error !== undefined).length,
    stopMs,
    errors,
  };
}

/** Median stop time over rounds: "none" sorts first, "not within the window" last; even counts take the lower middle. */
export function medianStop(samples: readonly Pick<FailoverSample, 'stopMs'>[]): StopTime | undefined {
  if (samples.length === 0) return undefined;
  const key = (s: StopTime): number => (s === 'none' ? -1 : s === 'not-within-window' ? Infinity : s);
  const sorted = samples.map((s) => s.stopMs).sort((a, b) => key(a) - key(b));
  return sorted[(sorted.length - 1) >> 1];
}
