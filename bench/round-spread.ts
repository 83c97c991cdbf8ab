// Per-round values of a metric and the round-to-round spread of each peer and of a ratio between
// two peers: whether a figure repeats. Pure: samples in, table text out.
import { median, type Peer, type Sample } from './bench-stats.ts';

export interface Spread {
  values: number[];
  min: number;
  max: number;
  median: number;
}

export function spreadOf(values: readonly number[]): Spread | undefined {
  const xs = values.filter((v) => Number.isFinite(v));
  if (xs.length === 0) return undefined;
  return { values: xs, min: Math.min(...xs), max: Math.max(...xs), median: median(xs)! };
}

/** The metric of one peer, in round order. */
export function roundValues(samples: readonly Sample[], key: string, peer: Peer): number[] {
  return samples
    .filter((s) => s.peer === peer && s.metrics[key] !== undefined)
    .sort((a, b) => a.round - b.round)
    .map((s) => s.metrics[key]!);
}

/** a / b per round, for the rounds that measured both (each round's peers ran minutes apart at most). */
export function roundRatios(samples: readonly Sample[], key: string, a: Peer, b: Peer): number[] {
  const rounds = [...new Set(samples.map((s) => s.round))].sort((x, y) => x - y);
  const out: number[] = [];
  for (const r of rounds) {
    const va = samples.find((s) => s.round === r && s.peer === a)?.metrics[key];
    const vb = samples.find((s) => s.round === r && s.peer === b)?.metrics[key];
    if (va !== undefined && vb !== undefined && vb !== 0) out.push(va / vb);
  }
  return out;
}

const f = (v: number, digits: number): string => v.toFixed(digits);

/** "0.41 0.45 0.52 (0.41–0.52)": every round, then the range. */
export function formatSpread(s: Spread | undefined, digits: number, unit = ''): string {
  if (!s) return '—';
  return `${s.values.map((v) => f(v, digits)).join(' ')} (${f(s.min, digits)}–${f(s.max, digits)}${unit})`;
}

/** One row per metric: each peer's rounds and range, then each ratio's rounds and range. */
export function renderSpreadTable(
  samples: readonly Sample[],
  rows: ReadonlyArray<{ key: string; label: string; digits: number }>,
  peers: readonly Peer[],
  ratios: ReadonlyArray<[Peer, Peer]>,
): string {
  const head = ['metric (each round, then range)', ...peers, ...ratios.map(([a, b]) => `${a} / ${b}`)];
  const lines = [`| ${head.join(' | ')} |`, `| ${head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`];
  for (const r of rows) {
    const cells = peers.map((p) => formatSpread(spreadOf(roundValues(samples, r.key, p)), r.digits));
    // A ratio of load, CPU shares or the generator's own lag between peers says nothing.
    const rc = ratios.map(([a, b]) => (/Busy|Foreign|Irq|load1|Lag/.test(r.key) ? '' : formatSpread(spreadOf(roundRatios(samples, r.key, a, b)), 2, 'x')));
    if ([...cells, ...rc].every((c) => c === '—' || c === '')) continue;
    lines.push(`| ${[r.label, ...cells, ...rc].join(' | ')} |`);
  }
  return lines.join('\n');
}
