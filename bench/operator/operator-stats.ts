// Pure arithmetic of the operator benchmark: Prometheus text, per-cluster cycle starts read from the
// emulator's request log, lateness, first-cycle times, percentiles and memory slopes. No I/O.

/** One OpenStack request the emulator answered (or hung), with the project of its token. */
export interface OsRequest {
  atMs: number;
  method: string;
  path: string;
}

export type CycleKind = 'routegc' | 'flight';

/**
 * Cycle starts of one cluster, from its project's requests in time order. The operator has no metric
 * for a cycle's start, so the calls mark it (as routegc-cycle.ts and flight-round.ts make them today):
 * a flight round lists the security groups by name and then reads the router; a routegc cycle reads
 * the router first. So a GET of the router right after a security-group list is flight's, every
 * other GET of the router starts a routegc cycle, and each security-group list starts a flight round.
 * In a cluster's first round flight takes routegc's read of the router (src/controllers/managed-cluster/
 * round-reads.ts) and makes no GET of its own: so flight's claim lasts `owedMs` after its group list,
 * and a router GET after that is routegc's next cycle (its first call, an interval later).
 */
export function cycleStarts(requests: readonly OsRequest[], owedMs = 5000): Record<CycleKind, number[]> {
  const out: Record<CycleKind, number[]> = { routegc: [], flight: [] };
  let flightOwesRouterUntil = -Infinity;
  for (const r of requests) {
    if (r.method !== 'GET') continue;
    if (/\/security-groups\?(.*&)?name=/.test(r.path)) {
      out.flight.push(r.atMs);
      flightOwesRouterUntil = r.atMs + owedMs;
    } else if (/\/routers\/[^/?]+$/.test(r.path.split('?')[0]!)) {
      if (r.atMs <= flightOwesRouterUntil) flightOwesRouterUntil = -Infinity;
      else out.routegc.push(r.atMs);
    }
  }
  return out;
}

/**
 * How late each cycle after the first started, in ms: a cycle is due at most 1.5 × interval after
 * the previous one (0-50 % jitter, counted from when the previous ended, which the log does not show:
 * a cycle's own duration counts as lateness here, so the figure errs on the late side). With endMs,
 * a cycle that is overdue at the end of the observation counts too (a cluster that stopped cycling).
 */
export function lateness(starts: readonly number[], intervalMs: number, endMs?: number): number[] {
  const out: number[] = [];
  for (let i = 1; i < starts.length; i++) out.push(Math.max(0, starts[i]! - starts[i - 1]! - 1.5 * intervalMs));
  const overdue = endMs === undefined || starts.length === 0 ? 0 : endMs - starts.at(-1)! - 1.5 * intervalMs;
  if (overdue > 0) out.push(overdue);
  return out;
}

/** The p-th percentile (0..100) by nearest rank; undefined for no values. */
export function percentile(values: readonly number[], p: number): number | undefined {
  const xs = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (xs.length === 0) return undefined;
  const rank = Math.min(xs.length, Math.max(1, Math.ceil((p / 100) * xs.length)));
  return xs[rank - 1];
}

export interface FirstCycles {
  /** Clusters whose routegc cycle and flight round both ran. */
  done: number;
  /** ms from start until the last of those; undefined unless every cluster got there. */
  allMs?: number;
  /** ms from start until half the clusters got there. */
  p50Ms?: number;
}

/** From each cluster's cycle starts: when it had had both its first routegc cycle and flight round. */
export function firstCycles(perCluster: readonly Record<CycleKind, number[]>[], startMs: number, kinds: readonly CycleKind[]): FirstCycles {
  const times = perCluster.map((c) => (kinds.every((k) => c[k].length > 0) ? Math.max(...kinds.map((k) => c[k][0]!)) - startMs : undefined));
  const done = times.filter((t): t is number => t !== undefined);
  return { done: done.length, allMs: done.length === perCluster.length && done.length > 0 ? Math.max(...done) : undefined, p50Ms: percentile(done, 50) };
}

/** One sample line of Prometheus text: name, labels, value. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (comments skipped; label values may hold escaped quotes). */
export function parsePrometheus(text: string): PromSample[] {
  const out: PromSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    const value = Number(m[4]);
    if (!Number.isNaN(value)) out.push({ name: m[1]!, labels, value });
  }
  return out;
}

/** Sum of the samples named `name` whose labels match every given label (a RegExp or an exact value). */
export function sumOf(samples: readonly PromSample[], name: string, match: Record<string, string | RegExp> = {}): number {
  let sum = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    const ok = Object.entries(match).every(([k, v]) => (typeof v === 'string' ? s.labels[k] === v : v.test(s.labels[k] ?? '')));
    if (ok) sum += s.value;
  }
  return sum;
}

export interface ApiCounts {
  /** Requests on resources (watches excluded: they are long-running, counted when they start). */
  total: number;
  /** resource[/subresource] verb → count. */
  byResource: Record<string, number>;
  /** 409 answers to writes of ManagedCluster status. */
  statusConflicts: number;
}

/** The change of apiserver_request_total between two scrapes of the apiserver's /metrics. */
export function apiRequestDelta(before: readonly PromSample[], after: readonly PromSample[]): ApiCounts {
  const key = (s: PromSample) => JSON.stringify(s.labels);
  const prior = new Map(before.filter((s) => s.name === 'apiserver_request_total').map((s) => [key(s), s.value]));
  const out: ApiCounts = { total: 0, byResource: {}, statusConflicts: 0 };
  for (const s of after) {
    if (s.name !== 'apiserver_request_total' || !s.labels.resource || s.labels.verb === 'WATCH') continue;
    const d = s.value - (prior.get(key(s)) ?? 0);
    if (d <= 0) continue;
    out.total += d;
    const res = `${s.labels.resource}${s.labels.subresource ? '/' + s.labels.subresource : ''} ${s.labels.verb}`;
    out.byResource[res] = (out.byResource[res] ?? 0) + d;
    if (s.labels.resource === 'managedclusters' && s.labels.subresource === 'status' && s.labels.code === '409') out.statusConflicts += d;
  }
  return out;
}

/** Bytes per cluster between consecutive sizes: (m[i] - m[i-1]) / (n[i] - n[i-1]); undefined for the first. */
export function slopes(points: readonly { n: number; value: number | undefined }[]): (number | undefined)[] {
  const sorted = [...points].sort((a, b) => a.n - b.n);
  return sorted.map((p, i) => {
    const prev = sorted[i - 1];
    if (!prev || prev.value === undefined || p.value === undefined || p.n === prev.n) return undefined;
    return (p.value - prev.value) / (p.n - prev.n);
  });
}

/** Median of the samples in the last third of the run (steady state, start-up spikes left out). */
export function steadyValue(samples: readonly { atMs: number; value: number }[]): number | undefined {
  if (samples.length === 0) return undefined;
  const first = samples[0]!.atMs;
  const last = samples.at(-1)!.atMs;
  const cut = first + ((last - first) * 2) / 3;
  return percentile(
    samples.filter((s) => s.atMs >= cut).map((s) => s.value),
    50,
  );
}

/**
 * A cumulative series (CPU seconds of a process, sampled in time order) at atMs, interpolated
 * between the samples either side; undefined outside the samples.
 */
export function valueAt(samples: readonly { atMs: number; value: number }[], atMs: number): number | undefined {
  for (let i = 0; i < samples.length; i++) {
    const b = samples[i]!;
    if (b.atMs < atMs) continue;
    if (b.atMs === atMs || i === 0) return b.atMs === atMs ? b.value : undefined;
    const a = samples[i - 1]!;
    return a.value + ((b.value - a.value) * (atMs - a.atMs)) / (b.atMs - a.atMs);
  }
  return undefined;
}
