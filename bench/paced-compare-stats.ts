// Pure parts of the paced p99 comparison (bench/paced-compare.ts): which peers to start, and what
// many paced loads per peer say. No I/O.
import { median } from './bench-stats.ts';

export type PacedPeerKind = 'kubeward' | 'kubeward-2' | 'nginx' | 'nginx-2';

export interface PacedPeer {
  /** The spec as given: the label in every line and table. */
  label: string;
  kind: PacedPeerKind;
  /** nginx only: its listen sockets per worker (SO_REUSEPORT), the kernel's spread as kubeward's. */
  reuseport: boolean;
  /** kubeward only: another build's bin/kubeward.js (a checkout of another commit). */
  main?: string;
}

const SPEC = /^(kubeward-2|kubeward|nginx-2|nginx)(:reuseport)?(?:@(\/[^\s]+\/bin\/kubeward\.js))?$/;

/**
 * `kubeward-2`, `nginx-2`, `nginx-2:reuseport`, `kubeward-2@/abs/checkout/bin/kubeward.js`.
 * Throws with the spec and the grammar when it does not fit.
 */
export function parsePeerSpec(spec: string): PacedPeer {
  const m = SPEC.exec(spec);
  const kind = m?.[1] as PacedPeerKind | undefined;
  if (!m || kind === undefined || (m[2] && !kind.startsWith('nginx')) || (m[3] && !kind.startsWith('kubeward')))
    throw new Error(
      `--peer ${JSON.stringify(spec)}: expected kubeward, kubeward-2, nginx or nginx-2; nginx may add :reuseport, kubeward @/absolute/path/bin/kubeward.js`,
    );
  return { label: spec, kind, reuseport: m[2] !== undefined, ...(m[3] ? { main: m[3] } : {}) };
}

export interface PeerSummary {
  label: string;
  loads: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRequest: number | undefined;
  /** p99 median / the reference peer's. */
  p99Ratio: number | undefined;
  /**
   * What one bench run (the median of `runLoads` loads) can tell about this peer against itself:
   * the 5th and 95th percentiles of the ratio of two such medians drawn from its own loads without
   * replacement, and how often it was at most the limit: the share of runs that would pass a
   * "p99 at most limit x the other's" target against a peer exactly like itself.
   */
  selfRatio?: RatioRange;
  /** The same for one bench run of this peer against one of the reference (draws from each peer's loads). */
  vsReference?: RatioRange;
}

export interface RatioRange {
  p5: number;
  p95: number;
  passPct: number;
}

export interface Load {
  label: string;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRequest?: number;
}

/** Fisher-Yates on a copy, the first n; rng() in [0, 1). */
function draw<T>(xs: readonly T[], n: number, rng: () => number): T[] {
  const a = [...xs];
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(rng() * (a.length - i));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a.slice(0, n);
}

/**
 * The self-ratio of selfRatio above, from `draws` resamples; undefined with fewer than 2 x runLoads
 * loads. passPct: how often the ratio was at most limit.
 */
export function selfRatioRange(p99s: readonly number[], runLoads: number, limit: number, draws: number, rng: () => number): RatioRange | undefined {
  if (p99s.length < 2 * runLoads || runLoads < 1 || draws < 1) return undefined;
  return ratioRange(draws, limit, () => {
    const d = draw(p99s, 2 * runLoads, rng);
    return median(d.slice(0, runLoads))! / median(d.slice(runLoads))!;
  });
}

/** One bench run of `mine` against one of `ref`: runLoads drawn from each; undefined when either has fewer. */
export function runRatioRange(
  mine: readonly number[],
  ref: readonly number[],
  runLoads: number,
  limit: number,
  draws: number,
  rng: () => number,
): RatioRange | undefined {
  if (mine.length < runLoads || ref.length < runLoads || runLoads < 1 || draws < 1) return undefined;
  return ratioRange(draws, limit, () => median(draw(mine, runLoads, rng))! / median(draw(ref, runLoads, rng))!);
}

function ratioRange(draws: number, limit: number, one: () => number): RatioRange {
  const ratios: number[] = [];
  let pass = 0;
  for (let i = 0; i < draws; i++) {
    const r = one();
    ratios.push(r);
    if (r <= limit) pass++;
  }
  ratios.sort((a, b) => a - b);
  return { p5: ratios[Math.floor(draws * 0.05)]!, p95: ratios[Math.min(draws - 1, Math.floor(draws * 0.95))]!, passPct: (100 * pass) / draws };
}

/** Medians per peer in the order given; ratios against `reference` (a label). */
export function summarize(
  labels: readonly string[],
  loads: readonly Load[],
  reference: string,
  o: { runLoads: number; limit: number; draws: number; rng: () => number },
): PeerSummary[] {
  const of = (label: string): Load[] => loads.filter((l) => l.label === label);
  const refP99s = of(reference).map((l) => l.p99Ms);
  const refP99 = median(refP99s);
  return labels.map((label) => {
    const mine = of(label);
    const p99s = mine.map((l) => l.p99Ms);
    const p99 = median(p99s) ?? Number.NaN;
    const self = selfRatioRange(p99s, o.runLoads, o.limit, o.draws, o.rng);
    const vs = label === reference ? undefined : runRatioRange(p99s, refP99s, o.runLoads, o.limit, o.draws, o.rng);
    return {
      label,
      loads: mine.length,
      p50Ms: median(mine.map((l) => l.p50Ms)) ?? Number.NaN,
      p99Ms: p99,
      cpuUsPerRequest: median(mine.flatMap((l) => (l.cpuUsPerRequest === undefined ? [] : [l.cpuUsPerRequest]))),
      p99Ratio: refP99 === undefined || refP99 === 0 || mine.length === 0 ? undefined : p99 / refP99,
      ...(self ? { selfRatio: self } : {}),
      ...(vs ? { vsReference: vs } : {}),
    };
  });
}

/** A small seeded generator (mulberry32), so the resampled ranges repeat for the same loads. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
