// How the operator sizes its work to the number of clusters (pure). Numbers measured with
// `npm run bench:operator` are in docs/benchmark.md and docs/design/operator-start.md.

/** Clusters per worker: a cycle mostly waits on the network, so one worker serves several clusters. */
export const CLUSTERS_PER_WORKER = 10;
export const MAX_WORKERS = 256;

/** Workers of one controller for `clusters` clusters: never fewer than `least`, never more than MAX_WORKERS. */
export function workersFor(clusters: number, least: number): number {
  return Math.min(MAX_WORKERS, Math.max(least, Math.ceil(clusters / CLUSTERS_PER_WORKER)));
}

/**
 * The deadline of one routegc cycle or flight round (every call in it): half the interval, between
 * 1 s and 60 s, so a hung cloud ends the run well before the cluster's next one is due.
 */
export function runDeadlineMs(intervalMs: number): number {
  return Math.min(60_000, Math.max(1000, Math.floor(intervalMs / 2)));
}

/** Time a run that passed its deadline gets to return before its worker goes on without it. */
export const SLOT_GRACE_MS = 2000;

/** deorbit's passes have their own timeouts; past this a pass frees its worker all the same. */
export const DEORBIT_SLOT_MS = 60_000;

/**
 * The window over which the first cycles after start (or a leader change) are spread: 5 ms per
 * cluster, at most 5 s and at most half an interval, so 1,000 clusters begin within 5 s without
 * all asking their clouds in the same instant.
 */
export function startSpreadMs(clusters: number, intervalMs: number): number {
  return Math.max(0, Math.min(5000, Math.floor(intervalMs / 2), clusters * 5));
}

/**
 * How long a cluster's first conditions of routegc (or flight) wait for the other's, so both go out
 * in one status write (cluster-status.ts gather). The two first cycles of a cluster run side by side
 * (operator.ts), so the wait is usually far shorter; the conditions are at most this late.
 */
export const FIRST_CONDITIONS_GATHER_MS = 3000;
