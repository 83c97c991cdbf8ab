// Chooses the upstream for one connection attempt. Pure: a linear scan, no allocation, so it can
// run for every accepted connection.
import { isPaced, msUntilToken, type PaceConfig } from './recovery-pace.ts';
import { slowStartShare } from './slow-start.ts';
import type { Upstream } from './upstream-list.ts';
import { isOlder, type KubeMinor } from './version-skew.ts';

export interface Pick {
  key: string;
  /** Every usable upstream was tried or down: this is a fail-open attempt at a down one. */
  failOpen: boolean;
  /**
   * Set when the best choice is an upstream whose recovery pacing has no token now and nothing
   * else of its rank is usable: wait this long, then pick again.
   */
  waitMs?: number;
}

/**
 * Latency tiers (ms upper bounds). Tie-breaking on raw latency would never tie, so small
 * differences (0.3 ms vs 0.4 ms on a LAN) count as equal and the random tie-break spreads nodes
 * that see the same picture; a decade apart (a remote zone) does not.
 */
const TIER_BOUNDS_MS = [1, 3, 10, 30, 100, 300, 1000] as const;

export function latencyTier(latencyMs: number | undefined): number {
  if (latencyMs === undefined) return 0;
  const i = TIER_BOUNDS_MS.findIndex((b) => latencyMs < b);
  return i === -1 ? TIER_BOUNDS_MS.length : i;
}

export interface SlowStart {
  now: number;
  /** 0 or less: off. */
  slowStartMs: number;
  /** Recovery pacing during the slow-start window; absent: off. */
  pace?: PaceConfig;
  /** The node's kubelet version: upstreams known to be older rank after the others (version-skew.ts). */
  minVersion?: KubeMinor;
}

/**
 * Order among usable upstreams (up or unknown, not drained, not yet tried for this connection):
 * non-backup before backup, up before unknown, at least the kubelet's version before older (when
 * the kubelet's version is known: an older apiserver is used only while no newer one is up),
 * local before remote, least load, lower latency
 * tier, then at random in proportion to weight. Load is active connections divided by weight, and
 * the weight is 1 except during slow start, where it is the upstream's slow-start share: weighted
 * least connections, as HAProxy's slowstart with leastconn. So slow start never overrides least
 * connections: a recovering upstream with fewer connections than its weight entitles it to still
 * wins, and a peer that piles up connections (a hung apiserver holds every one it is sent) loses
 * its picks to it. When none is usable, fail open: try the down ones (backups last), most
 * recently up first, rather than refuse the client (nginx's "no live upstreams"). Drained
 * upstreams are never picked. Returns undefined when nothing is left to try.
 *
 * Recovery pacing: an upstream in its slow-start window whose token bucket is empty sits this
 * pick out. When it would have ranked before everything that is left, the pick is that upstream
 * with `waitMs`, the time until its next token: the caller waits rather than hand the connection to
 * a backup or a down upstream.
 */
export function pickUpstream(
  upstreams: readonly Upstream[],
  tried: ReadonlySet<string>,
  random: () => number = Math.random,
  slowStart?: SlowStart,
): Pick | undefined {
  let best: Upstream | undefined;
  let bestWeight = 1;
  let tieWeight = 0;
  let paced: Upstream | undefined;
  let pacedWaitMs = 0;
  const min = slowStart?.minVersion;
  for (const u of upstreams) {
    if (u.drained || u.state === 'down' || tried.has(u.key)) continue;
    if (slowStart?.pace && isPaced(u, slowStart.now, slowStart.pace, slowStart.slowStartMs)) {
      const waitMs = msUntilToken(u, slowStart.now, slowStart.pace);
      if (waitMs > 0) {
        if (paced === undefined || rankState(u, min) < rankState(paced, min) || (rankState(u, min) === rankState(paced, min) && waitMs < pacedWaitMs)) {
          paced = u;
          pacedWaitMs = waitMs;
        }
        continue;
      }
    }
    const weight = slowStart && u.slowStartFrom !== undefined ? slowStartShare(u.slowStartFrom, slowStart.now, slowStart.slowStartMs) : 1;
    const cmp = best === undefined ? -1 : compareUsable(u, weight, best, bestWeight, min);
    if (cmp < 0) {
      best = u;
      bestWeight = weight;
      tieWeight = weight;
    } else if (cmp === 0) {
      // Weighted reservoir sampling: each tied upstream wins with probability weight / sum of the tied weights.
      tieWeight += weight;
      if (random() * tieWeight < weight) {
        best = u;
        bestWeight = weight;
      }
    }
  }
  if (paced && (!best || rankState(paced, min) < rankState(best, min))) return { key: paced.key, failOpen: false, waitMs: pacedWaitMs };
  if (best) return { key: best.key, failOpen: false };
  return pickFailOpen(upstreams, tried, random);
}

function pickFailOpen(upstreams: readonly Upstream[], tried: ReadonlySet<string>, random: () => number): Pick | undefined {
  let best: Upstream | undefined;
  let ties = 0;
  for (const u of upstreams) {
    if (u.drained || tried.has(u.key)) continue;
    const cmp = best === undefined ? -1 : Number(u.backup) - Number(best.backup) || (best.lastUpAt ?? -1) - (u.lastUpAt ?? -1);
    if (cmp < 0) {
      best = u;
      ties = 1;
    } else if (cmp === 0 && random() * ++ties < 1) {
      best = u;
    }
  }
  return best ? { key: best.key, failOpen: true } : undefined;
}

/** Negative when a ranks before b; aw and bw are their weights (0 < w <= 1). */
function compareUsable(a: Upstream, aw: number, b: Upstream, bw: number, min: KubeMinor | undefined): number {
  return (
    rankState(a, min) - rankState(b, min) ||
    Number(b.local) - Number(a.local) ||
    // a.active / aw against b.active / bw, without the division.
    Math.sign(a.active * bw - b.active * aw) ||
    latencyTier(a.latencyMs) - latencyTier(b.latencyMs)
  );
}

function rankState(u: Upstream, min: KubeMinor | undefined): number {
  return (u.backup ? 4 : 0) + (u.state === 'up' ? 0 : 2) + (isOlder(u.version, min) ? 1 : 0);
}
