// Markdown tables of the benchmark's medians and ratios. Pure: results in, text out.
import { PEERS, ratio, type Medians, type Peer, type Sample } from './bench-stats.ts';
import { medianStop, type FailoverSample, type Scenario } from './failover-analysis.ts';
import { footprintFigures, renderFigures } from './figures.ts';
import type { ModeMemory } from './measure-modes.ts';

/** What one `npm run bench` writes to bench/results/<date>.json. */
export interface BenchResults {
  date: string;
  machine: Record<string, string | number>;
  settings: {
    rounds: number;
    load: { durationS: number };
    idleConnections: number;
    kubewardExtraArgs?: readonly string[];
    /** The data path every kubeward of the run was checked to relay on (absent in older results). */
    kubewardRelay?: string;
    /** --max-steal of the run (absent in older results). */
    maxStealPct?: number;
    nginxListenParams?: readonly string[];
  } & Record<string, unknown>;
  medians: Medians;
  samples: readonly Sample[];
  modes: readonly ModeMemory[];
  failovers: readonly FailoverSample[];
}

export interface MetricSpec {
  key: string;
  label: string;
  digits: number;
  /** Measured on the proxy process (CPU, memory): there is no such number for "direct". */
  proxyOnly?: boolean;
  /** A condition of the measurement, not a figure of the peer: no ratios. */
  condition?: boolean;
}

export const METRICS: readonly MetricSpec[] = [
  { key: 'kaRps', label: 'keep-alive requests/s (64 conns)', digits: 0 },
  { key: 'kaP50Ms', label: 'keep-alive p50 latency (ms)', digits: 2 },
  { key: 'kaP99Ms', label: 'keep-alive p99 latency (ms)', digits: 2 },
  { key: 'kaCpuUsPerReq', label: 'proxy CPU per keep-alive request (µs)', digits: 1, proxyOnly: true },
  { key: 'kpRps', label: 'paced keep-alive requests/s (64 conns, 10 ms on average between requests)', digits: 0 },
  { key: 'kpP50Ms', label: 'paced keep-alive p50 latency (ms)', digits: 2 },
  { key: 'kpP99Ms', label: 'paced keep-alive p99 latency (ms)', digits: 2 },
  { key: 'kpCpuUsPerReq', label: 'proxy CPU per paced keep-alive request (µs)', digits: 1, proxyOnly: true },
  { key: 'ncRps', label: 'new connections/s (1 request each)', digits: 0 },
  { key: 'ncCpuUsPerConn', label: 'proxy CPU per new connection (µs)', digits: 1, proxyOnly: true },
  { key: 'ncErrors', label: 'new-connection socket errors per round', digits: 0 },
  { key: 'bulkMBps', label: 'bulk 100 MB response (MB/s)', digits: 0 },
  { key: 'restRssMB', label: 'proxy RSS at rest (MiB, all processes)', digits: 1, proxyOnly: true },
  { key: 'restAnonMB', label: 'proxy private (RssAnon) at rest (MiB)', digits: 1, proxyOnly: true },
  { key: 'restPssMB', label: 'proxy PSS at rest (MiB)', digits: 1, proxyOnly: true },
  { key: 'loadRssMB', label: 'proxy RSS under keep-alive load (MiB, peak)', digits: 1, proxyOnly: true },
  { key: 'loadAnonMB', label: 'proxy private under keep-alive load (MiB, peak)', digits: 1, proxyOnly: true },
  { key: 'loadPssMB', label: 'proxy PSS under keep-alive load (MiB, peak)', digits: 1, proxyOnly: true },
  { key: 'idleKBPerConn', label: 'proxy RSS per idle connection, 5,000 held (KiB, median step of 1,000)', digits: 2, proxyOnly: true },
  { key: 'kaStealPct', label: "the host's steal during the keep-alive load (% of the machine's CPU time)", digits: 1, condition: true },
  { key: 'kpStealPct', label: "the host's steal during the paced load (% of the machine's CPU time)", digits: 1, condition: true },
  { key: 'attempts', label: 'measurements per round (again when the steal was above --max-steal)', digits: 0, condition: true },
];

const NAMES: Record<Peer, string> = {
  kubeward: 'kubeward (1 process)',
  'kubeward-2': 'kubeward --workers 2',
  nginx: 'nginx (1 worker)',
  'nginx-2': 'nginx (2 workers)',
  haproxy: 'HAProxy',
  direct: 'direct',
};
const COLUMNS = ['kubeward', 'nginx', 'kubeward-2', 'nginx-2', 'haproxy', 'direct'] as const;
const DASH = '—';

/** A number with a fixed count of decimals and thousands separators; a dash for none. */
export function formatNumber(value: number | undefined, digits: number): string {
  if (value === undefined || Number.isNaN(value)) return DASH;
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function formatRatio(value: number | undefined): string {
  return value === undefined ? DASH : `${value.toFixed(2)}x`;
}

/**
 * Medians per metric and peer, then the pairs the issue compares: one kubeward process against
 * nginx with one worker, --workers 2 against nginx's two, kubeward against HAProxy and direct.
 */
export function renderMedianTable(medians: Medians, metrics: readonly MetricSpec[] = METRICS): string {
  const head = [
    'metric (median of rounds)',
    ...COLUMNS.map((p) => NAMES[p]),
    'kubeward / nginx (1 each)',
    'kubeward / nginx (2 each)',
    'kubeward / HAProxy',
    'kubeward / direct',
  ];
  const lines = [row(head), row(head.map((_, i) => (i === 0 ? '---' : '---:')))];
  for (const spec of metrics) {
    const m = medians[spec.key];
    if (!m) continue;
    const values = COLUMNS.map((p) => formatNumber(m[p], spec.digits));
    const r = (a: number | undefined, b: number | undefined): string => (spec.condition ? DASH : formatRatio(ratio(a, b)));
    lines.push(
      row([
        spec.label,
        ...values,
        r(m.kubeward, m.nginx),
        r(m['kubeward-2'], m['nginx-2']),
        r(m.kubeward, m.haproxy),
        spec.proxyOnly ? DASH : r(m.kubeward, m.direct),
      ]),
    );
  }
  return lines.join('\n');
}

const SCENARIO_LABELS: Record<Scenario, string> = {
  kill: 'backend killed (SIGKILL)',
  hang: 'backend hangs (SIGSTOP: accepts, never answers)',
  'readyz-503': 'backend /readyz 503, still serving',
};

/** One line per scenario and proxy: failed requests and when new connections stopped reaching the backend. */
export function renderFailoverTable(samples: readonly FailoverSample[]): string {
  const head = [
    'scenario',
    'proxy',
    'rounds',
    'failed requests (median)',
    'slow > 1 s (median)',
    'new connections stop reaching it after (median)',
    'proxy marked it down after (median)',
  ];
  const lines = [row(head), row(['---', '---', '---:', '---:', '---:', '---:', '---:'])];
  for (const scenario of Object.keys(SCENARIO_LABELS) as Scenario[]) {
    // The peers the run measured, in the bench's order (a run before nginx-2 existed compared nginx).
    for (const peer of PEERS) {
      const mine = samples.filter((s) => s.scenario === scenario && s.peer === peer);
      if (mine.length === 0) continue;
      lines.push(
        row([
          SCENARIO_LABELS[scenario],
          NAMES[peer],
          String(mine.length),
          formatNumber(medianOf(mine.map((s) => s.failed)), 0),
          formatNumber(medianOf(mine.map((s) => s.slow)), 0),
          formatStop(mine),
          formatMarkedDown(mine),
        ]),
      );
    }
  }
  return lines.join('\n');
}

function medianOf(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

function formatStop(samples: readonly FailoverSample[]): string {
  const stop = medianStop(samples);
  if (stop === undefined) return DASH;
  if (stop === 'none') return 'no connection affected';
  if (stop === 'not-within-window') return `not within ${((samples[0]?.windowMs ?? 0) / 1000).toFixed(0)} s`;
  return `${(stop / 1000).toFixed(2)} s`;
}

/** Rounds where the proxy never said so count as "not marked"; the median decides. Only kubeward reports it. */
function formatMarkedDown(samples: readonly FailoverSample[]): string {
  if (samples[0]?.peer !== 'kubeward') return 'not reported';
  const sorted = samples.map((s) => s.markedDownMs ?? Infinity).sort((a, b) => a - b);
  const mid = sorted[(sorted.length - 1) >> 1] as number;
  return Number.isFinite(mid) ? `${(mid / 1000).toFixed(2)} s` : 'not marked down';
}

/** The memory of watch, routes and agent at rest, one line each. */
export function renderModes(modes: readonly ModeMemory[]): string {
  const lines = ['| daemon at rest (one process, as shipped; median) | RSS (MiB) | private, RssAnon (MiB) | PSS (MiB) |', '| --- | ---: | ---: | ---: |'];
  for (const d of modes)
    lines.push(
      `| kubeward ${d.mode}${d.mode === 'agent' ? ' (proxy + watch + routes)' : ''} | ${d.rssMB.toFixed(1)} | ${d.anonMB.toFixed(1)} | ${d.pssMB.toFixed(1)} |`,
    );
  return lines.join('\n');
}

/** The line that says where and on what a run was measured: the date, the commit and the machine. */
export function renderProvenance(r: Pick<BenchResults, 'date' | 'machine' | 'settings'>): string {
  const m = r.machine;
  const dirty = m.kubewardProxyDirty === 'yes' ? ' (src/proxy with uncommitted changes)' : '';
  const extra =
    (r.settings.kubewardRelay ? `, kubeward's data path ${r.settings.kubewardRelay}` : '') +
    (r.settings.maxStealPct !== undefined ? `, a round measured again (up to 3 times) when the host's steal passed ${r.settings.maxStealPct} %` : '') +
    (r.settings.kubewardExtraArgs?.length ? `, kubeward with ${r.settings.kubewardExtraArgs.join(' ')}` : '') +
    (r.settings.nginxListenParams?.length ? `, nginx listening with ${r.settings.nginxListenParams.join(' ')} (not kubespray's setting)` : '');
  return (
    `Measured on ${r.date.slice(0, 10)} at kubeward commit \`${m.kubewardCommit}\`${dirty} on ${m.cores} x ${m.cpu}, ${m.memoryGiB} GiB, ` +
    `Linux ${m.kernel}, Node ${m.node}; ${m.nginx}; ${String(m.haproxy).split(' - ')[0]}; ` +
    `${r.settings.rounds} round${r.settings.rounds === 1 ? '' : 's'} of ${r.settings.load.durationS} s loads, ${r.settings.idleConnections.toLocaleString('en-US')} idle connections${extra}.`
  );
}

/** Everything one run reports, in the order the bench prints it and docs/benchmark.md shows it. */
export function renderResults(r: BenchResults): string {
  const parts = [renderProvenance(r), renderFigures(footprintFigures(r.medians, r.modes))];
  if (r.samples.length > 0) parts.push(renderMedianTable(r.medians));
  if (r.modes.length > 0) parts.push(renderModes(r.modes));
  if (r.failovers.length > 0) parts.push(renderFailoverTable(r.failovers));
  return parts.join('\n\n');
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}
