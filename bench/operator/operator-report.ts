// The operator benchmark's result per size, the operator's scale targets checked against it, and the
// Markdown tables for docs/benchmark.md. Pure: results in, text out.
import { formatNumber } from '../render-table.ts';
import { slopes } from './operator-stats.ts';

export interface SizeResult {
  n: number;
  /** Seconds the operator ran. */
  durationS: number;
  rssMiB?: number;
  rssPeakMiB?: number;
  heapUsedMiB?: number;
  /** Operator CPU (user + system) over the whole run, seconds per minute. */
  cpuSPerMin?: number;
  /** The same after every cluster's first cycle (steady state). */
  cpuSPerMinSteady?: number;
  firstCycleAllS?: number;
  firstCycleP50S?: number;
  /**
   * CPU seconds each process used from the operator's start until every cluster had its first cycle
   * (/proc, sampled every 0.5 s): what the start costs whatever the load, and whose CPU it competes with.
   */
  startCpuS?: { operator?: number; kubeApiserver?: number; etcd?: number; emulator?: number };
  /** Clusters that had both their first routegc cycle and flight round in the run. */
  firstCycleDone: number;
  cycles: { routegc: number; flight: number };
  latenessP50S?: number;
  latenessP99S?: number;
  latenessMaxS?: number;
  eventLoopMaxMs?: number;
  eventLoopP99Ms?: number;
  /** Largest after every cluster's first cycle (start-up left out). */
  eventLoopMaxSteadyMs?: number;
  osRequestsPerClusterCycle?: number;
  kubeRequestsPerClusterCycle?: number;
  statusWrites: number;
  statusConflicts: number;
  kubeByResource: Record<string, number>;
  osByKind: Record<string, number>;
  /** Events the run left, by type and reason: how many Event objects, and their summed count (repeats). */
  eventsByReason?: Record<string, { objects: number; count: number }>;
}

export interface Row {
  label: string;
  digits: number;
  value: (r: SizeResult, perCluster: PerCluster) => number | undefined;
}
export interface PerCluster {
  rssKiB?: number;
  heapKiB?: number;
}

export const ROWS: readonly Row[] = [
  { label: 'operator RSS, steady (MiB)', digits: 0, value: (r) => r.rssMiB },
  { label: 'operator RSS, peak (MiB)', digits: 0, value: (r) => r.rssPeakMiB },
  { label: 'heap used, steady (MiB)', digits: 0, value: (r) => r.heapUsedMiB },
  { label: 'RSS per cluster, slope from the size before (KiB)', digits: 0, value: (_r, p) => p.rssKiB },
  { label: 'heap per cluster, slope from the size before (KiB)', digits: 0, value: (_r, p) => p.heapKiB },
  { label: 'CPU, s per minute (whole run)', digits: 1, value: (r) => r.cpuSPerMin },
  { label: 'CPU, s per minute (after every first cycle)', digits: 1, value: (r) => r.cpuSPerMinSteady },
  { label: 'start until every cluster had its first cycle (s)', digits: 1, value: (r) => r.firstCycleAllS },
  { label: 'start until half the clusters had it (s)', digits: 1, value: (r) => r.firstCycleP50S },
  { label: 'operator CPU until every first cycle (s)', digits: 1, value: (r) => r.startCpuS?.operator },
  {
    label: 'operator share of a core until then',
    digits: 2,
    value: (r) => (r.startCpuS?.operator === undefined || !r.firstCycleAllS ? undefined : r.startCpuS.operator / r.firstCycleAllS),
  },
  { label: 'kube-apiserver + etcd CPU until then (s)', digits: 1, value: (r) => sumDefined(r.startCpuS?.kubeApiserver, r.startCpuS?.etcd) },
  { label: 'emulator (the bench process) CPU until then (s)', digits: 1, value: (r) => r.startCpuS?.emulator },
  { label: 'cycle lateness p50 (s)', digits: 1, value: (r) => r.latenessP50S },
  { label: 'cycle lateness p99 (s)', digits: 1, value: (r) => r.latenessP99S },
  { label: 'event-loop delay, largest, start-up included (ms)', digits: 0, value: (r) => r.eventLoopMaxMs },
  { label: 'event-loop delay, largest after every first cycle (ms)', digits: 0, value: (r) => r.eventLoopMaxSteadyMs },
  { label: 'event-loop delay, p99 of the worst 5 s (ms)', digits: 0, value: (r) => r.eventLoopP99Ms },
  { label: 'OpenStack requests per cluster per cycle', digits: 1, value: (r) => r.osRequestsPerClusterCycle },
  { label: 'Kubernetes requests per cluster per cycle', digits: 1, value: (r) => r.kubeRequestsPerClusterCycle },
  { label: 'ManagedCluster status writes', digits: 0, value: (r) => r.statusWrites },
  { label: 'ManagedCluster status write conflicts (409)', digits: 0, value: (r) => r.statusConflicts },
  { label: 'cycles seen (routegc + flight)', digits: 0, value: (r) => r.cycles.routegc + r.cycles.flight },
  { label: 'run length (s)', digits: 0, value: (r) => r.durationS },
];

function sumDefined(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : a + b;
}

/** Memory per cluster between consecutive sizes (KiB), by N. */
export function perCluster(results: readonly SizeResult[]): Map<number, PerCluster> {
  const mib = 1024;
  const rss = slopes(results.map((r) => ({ n: r.n, value: r.rssMiB })));
  const heap = slopes(results.map((r) => ({ n: r.n, value: r.heapUsedMiB })));
  const sorted = [...results].sort((a, b) => a.n - b.n);
  return new Map(
    sorted.map((r, i) => [r.n, { rssKiB: rss[i] === undefined ? undefined : rss[i]! * mib, heapKiB: heap[i] === undefined ? undefined : heap[i]! * mib }]),
  );
}

export function renderTable(results: readonly SizeResult[]): string {
  const sorted = [...results].sort((a, b) => a.n - b.n);
  const per = perCluster(sorted);
  const head = `| | ${sorted.map((r) => `N=${r.n.toLocaleString('en-US')}`).join(' | ')} |`;
  const sep = `|---|${sorted.map(() => '---:').join('|')}|`;
  const rows = ROWS.map((row) => `| ${row.label} | ${sorted.map((r) => formatNumber(row.value(r, per.get(r.n)!), row.digits)).join(' | ')} |`);
  return [head, sep, ...rows].join('\n') + '\n';
}

export interface TargetCheck {
  target: string;
  holds: boolean | undefined;
  measured: string;
}

/**
 * The operator's scale targets against the results. "No conflict storm" is read as at most 1 % of status
 * writes answered 409; "on time" as cycle lateness p99 under 1 s. A target that needs a size that
 * was not run is undefined (not measured), not passed.
 */
export function checkTargets(results: readonly SizeResult[]): TargetCheck[] {
  const sorted = [...results].sort((a, b) => a.n - b.n);
  const at1000 = sorted.find((r) => r.n === 1000);
  // From the smallest size to the largest: a neighbouring pair is noise-prone (RSS moves by 100+ MiB
  // between runs), and a span under 90 clusters says nothing about 100 KiB per cluster.
  const smallest = sorted[0];
  const largest = sorted.at(-1);
  const span = smallest && largest ? largest.n - smallest.n : 0;
  const slope =
    span >= 90 && smallest!.rssMiB !== undefined && largest!.rssMiB !== undefined ? ((largest!.rssMiB - smallest!.rssMiB) / span) * 1024 : undefined;
  const worstConflicts = Math.max(0, ...sorted.map((r) => (r.statusWrites ? r.statusConflicts / r.statusWrites : 0)));
  const worstLate = Math.max(0, ...sorted.map((r) => r.latenessP99S ?? 0));
  const f = (v: number | undefined, d: number) => formatNumber(v, d);
  return [
    {
      target: "every cluster's first cycle within 10 s at N = 1,000",
      holds: at1000 ? at1000.firstCycleAllS !== undefined && at1000.firstCycleAllS <= 10 : undefined,
      measured: at1000 ? `${f(at1000.firstCycleAllS, 1)} s` : `not run at N = 1,000; ${sorted.map((r) => `N=${r.n}: ${f(r.firstCycleAllS, 1)} s`).join(', ')}`,
    },
    {
      target: 'at most 100 KiB of operator memory (RSS) per cluster',
      holds: slope === undefined ? undefined : slope <= 100,
      measured: slope === undefined ? 'needs two sizes at least 90 clusters apart' : `${f(slope, 0)} KiB per cluster (N=${smallest!.n} to ${largest!.n})`,
    },
    {
      target: 'no status conflict storm (409s at most 1 % of ManagedCluster status writes)',
      holds: sorted.length ? worstConflicts <= 0.01 : undefined,
      measured: sorted.map((r) => `N=${r.n}: ${r.statusConflicts} of ${r.statusWrites}`).join(', '),
    },
    {
      target: 'every cluster cycles on time (lateness p99 under 1 s)',
      holds: sorted.length ? worstLate < 1 : undefined,
      measured: sorted.map((r) => `N=${r.n}: p99 ${f(r.latenessP99S, 1)} s`).join(', '),
    },
  ];
}

export function renderTargets(checks: readonly TargetCheck[]): string {
  const word = (h: boolean | undefined) => (h === undefined ? 'not measured' : h ? 'holds' : 'does not hold');
  return ['| target | result | measured |', '|---|---|---|', ...checks.map((c) => `| ${c.target} | ${word(c.holds)} | ${c.measured} |`)].join('\n') + '\n';
}
