// Pure arithmetic of the benchmark: medians over rounds and ratios between peers. No I/O.

/**
 * The programs compared; "direct" is the client talking to the backend with no proxy (the limit).
 * kubeward is one process (as shipped) against nginx with one worker; kubeward-2 (--workers 2)
 * against nginx-2, kubespray's two workers.
 */
export const PEERS = ['kubeward', 'kubeward-2', 'nginx', 'nginx-2', 'haproxy', 'direct'] as const;
export type Peer = (typeof PEERS)[number];
export type ProxyPeer = Exclude<Peer, 'direct'>;
/** Failover compares the shipped kubeward with kubespray's two choices. */
export const FAILOVER_PEERS: readonly ProxyPeer[] = ['kubeward', 'nginx-2', 'haproxy'];

/** One measurement of one peer in one round; a metric that does not apply (CPU of "direct") is absent. */
export interface Sample {
  peer: Peer;
  round: number;
  metrics: Record<string, number>;
}

/** Median of the finite values; undefined for none. Even counts take the mean of the middle two. */
export function median(values: readonly number[]): number | undefined {
  const xs = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (xs.length === 0) return undefined;
  const mid = xs.length >> 1;
  return xs.length % 2 === 1 ? xs[mid] : ((xs[mid - 1] as number) + (xs[mid] as number)) / 2;
}

/** a / b, undefined when either is missing or b is zero (a ratio against nothing says nothing). */
export function ratio(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined || b === undefined || b === 0) return undefined;
  return a / b;
}

export type Medians = Record<string, Partial<Record<Peer, number>>>;

/** metric → peer → median over that peer's rounds. */
export function mediansOf(samples: readonly Sample[]): Medians {
  const byMetric = new Map<string, Map<Peer, number[]>>();
  for (const s of samples) {
    for (const [metric, value] of Object.entries(s.metrics)) {
      const byPeer = byMetric.get(metric) ?? new Map<Peer, number[]>();
      byMetric.set(metric, byPeer);
      byPeer.set(s.peer, [...(byPeer.get(s.peer) ?? []), value]);
    }
  }
  const out: Medians = {};
  for (const [metric, byPeer] of byMetric) {
    const row: Partial<Record<Peer, number>> = {};
    for (const [peer, values] of byPeer) {
      const m = median(values);
      if (m !== undefined) row[peer] = m;
    }
    out[metric] = row;
  }
  return out;
}

/** The order peers are measured in round r: rotated each round so no peer always runs first or last. */
export function peerOrder<T>(peers: readonly T[], round: number): T[] {
  const n = peers.length;
  if (n === 0) return [];
  const k = ((round % n) + n) % n;
  return [...peers.slice(k), ...peers.slice(0, k)];
}

/**
 * Whether a peer's round is measured again: when the hypervisor took more than maxStealPct of the
 * machine's CPU time during one of its latency loads, and attempts remain. Every peer is held to
 * the same rule, so a burst on the host costs the round it fell in, not one peer's figures.
 */
export function measureAgain(stealPcts: readonly (number | undefined)[], maxStealPct: number, attempt: number, maxAttempts: number): boolean {
  return attempt < maxAttempts && stealPcts.some((p) => p !== undefined && p > maxStealPct);
}
