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

/**
 * The key of the "other processes' CPU" figure of the window a metric was measured in
 * ("pinned:kpP99Ms" → "pinned:kpForeignPct"); undefined for a metric without one.
 */
export function foreignKeyOf(key: string): string | undefined {
  const m = /^(\w+):(ka|kp|ol\d+)(?!ForeignPct$)[A-Z]\w*$/.exec(key);
  return m ? `${m[1]}:${m[2]}ForeignPct` : undefined;
}

interface Marked {
  value: number;
  /** Measured while other processes used more than the limit of CPU. */
  busy: boolean;
}

function marked(samples: readonly Sample[], key: string, peer: Peer, maxForeignPct: number): Marked[] {
  const fk = foreignKeyOf(key);
  return samples
    .filter((s) => s.peer === peer && s.metrics[key] !== undefined)
    .sort((a, b) => a.round - b.round)
    .map((s) => ({ value: s.metrics[key]!, busy: fk !== undefined && (s.metrics[fk] ?? 0) > maxForeignPct }));
}

/** Every round (a * marks one measured on a busy machine), then the range of the others. */
export function formatMarked(xs: readonly Marked[], digits: number, unit = ''): string {
  if (xs.length === 0) return '—';
  const clean = xs.filter((x) => !x.busy).map((x) => x.value);
  const range = clean.length === 0 ? 'none quiet' : `${f(Math.min(...clean), digits)}–${f(Math.max(...clean), digits)}${unit}`;
  return `${xs.map((x) => `${f(x.value, digits)}${x.busy ? '*' : ''}`).join(' ')} (${range})`;
}

/**
 * One row per metric: each peer's rounds and range, then each ratio's rounds and range. A value
 * from a window in which other processes used more than maxForeignPct of one CPU is marked with
 * a * and left out of the range (and so is a ratio with such a value on either side).
 */
export function renderSpreadTable(
  samples: readonly Sample[],
  rows: ReadonlyArray<{ key: string; label: string; digits: number }>,
  peers: readonly Peer[],
  ratios: ReadonlyArray<[Peer, Peer]>,
  maxForeignPct = Infinity,
): string {
  const head = ['metric (each round, then range)', ...peers, ...ratios.map(([a, b]) => `${a} / ${b}`)];
  const lines = [`| ${head.join(' | ')} |`, `| ${head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`];
  for (const r of rows) {
    const cells = peers.map((p) => formatMarked(marked(samples, r.key, p, maxForeignPct), r.digits));
    // A ratio of load, CPU shares or the generator's own lag between peers says nothing.
    const rc = ratios.map(([a, b]) =>
      /Busy|Foreign|Irq|load1|Lag/.test(r.key) ? '' : formatMarked(markedRatios(samples, r.key, a, b, maxForeignPct), 2, 'x'),
    );
    if ([...cells, ...rc].every((c) => c === '—' || c === '')) continue;
    lines.push(`| ${[r.label, ...cells, ...rc].join(' | ')} |`);
  }
  return lines.join('\n');
}

function markedRatios(samples: readonly Sample[], key: string, a: Peer, b: Peer, maxForeignPct: number): Marked[] {
  const ma = new Map(samples.filter((s) => s.peer === a).map((s) => [s.round, s]));
  const out: Marked[] = [];
  for (const r of [...new Set(samples.map((s) => s.round))].sort((x, y) => x - y)) {
    const sa = ma.get(r);
    const sb = samples.find((s) => s.round === r && s.peer === b);
    const va = sa?.metrics[key];
    const vb = sb?.metrics[key];
    if (va === undefined || vb === undefined || vb === 0) continue;
    const fk = foreignKeyOf(key);
    const busy = fk !== undefined && ((sa!.metrics[fk] ?? 0) > maxForeignPct || (sb!.metrics[fk] ?? 0) > maxForeignPct);
    out.push({ value: va / vb, busy });
  }
  return out;
}
