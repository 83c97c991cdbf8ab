// The soak's fault schedule and its figures. Pure: the runner (run-soak.ts) does the I/O.

export const FAULT_KINDS = ['kill', 'hang', 'drain', 'reload'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** One fault: at `atMs` into the load, upstream `upstream` is killed (SIGKILL, restarted after forMs), hung (SIGSTOP, SIGCONT after forMs), drained (a graceful shutdown as kube-apiserver's: readyz 503 for forMs, then it stops and is back forMs/2 later), or the proxy reloads (SIGHUP). */
export interface Fault {
  atMs: number;
  kind: FaultKind;
  upstream: number;
  forMs: number;
}

/**
 * One fault per period, kinds in turn and upstreams in turn, the first after one period, none
 * overlapping (each lasts at most half a period) and none running past the end. A fault's effects
 * are counted under it until the next period begins: recovery belongs to the fault that caused it.
 */
export function faultSchedule(durationMs: number, periodMs: number, upstreams: number): Fault[] {
  const faults: Fault[] = [];
  const forMs = Math.min(10_000, Math.floor(periodMs / 2));
  for (let i = 0, at = periodMs; at + forMs < durationMs; i++, at += periodMs) {
    const kind = FAULT_KINDS[i % FAULT_KINDS.length]!;
    faults.push({ atMs: at, kind, upstream: i % upstreams, forMs: kind === 'reload' ? 0 : forMs });
  }
  return faults;
}

/** The fault whose period holds tMs ('none' before the first and outside the schedule). */
export function faultAt(schedule: readonly Fault[], periodMs: number, tMs: number): FaultKind | 'none' {
  return faultIn(schedule, periodMs, tMs)?.kind ?? 'none';
}

/** The fault whose period holds tMs, or undefined. */
export function faultIn(schedule: readonly Fault[], periodMs: number, tMs: number): Fault | undefined {
  return schedule.find((f) => tMs >= f.atMs && tMs < f.atMs + periodMs);
}

export interface MemorySample {
  /** Ms since the load began (negative: at rest before it). */
  tMs: number;
  rssBytes: number;
  /** Private anonymous memory (smaps_rollup Anonymous). */
  anonBytes: number;
  /** Resident file-backed pages (RssFile in /proc/<pid>/status): the Node binary and libraries, shared and clean. */
  fileBytes?: number;
  fds: number;
  /** From the proxy's /metrics: the V8 heap (committed, used) and external memory (Buffers, slabs); absent when it could not be read. */
  heapTotalBytes?: number;
  heapUsedBytes?: number;
  externalBytes?: number;
}

/** Least-squares slope of field over the samples, in units per 10 minutes; 0 with fewer than 2 samples. */
export function slopePer10Min(samples: readonly MemorySample[], field: 'rssBytes' | 'anonBytes' | 'fds'): number {
  const n = samples.length;
  if (n < 2) return 0;
  let sx = 0;
  let sy = 0;
  for (const s of samples) {
    sx += s.tMs;
    sy += s[field];
  }
  const mx = sx / n;
  const my = sy / n;
  let num = 0;
  let den = 0;
  for (const s of samples) {
    num += (s.tMs - mx) * (s[field] - my);
    den += (s.tMs - mx) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 600_000;
}

/** The samples of the second half of the load: the slope after warm-up (buffers, JIT, heap sizing). */
export function secondHalf(samples: readonly MemorySample[], loadMs: number): MemorySample[] {
  return samples.filter((s) => s.tMs >= loadMs / 2 && s.tMs <= loadMs);
}
