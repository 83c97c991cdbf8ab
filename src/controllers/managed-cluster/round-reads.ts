// One read per cluster and round of what routegc and flight both look at (the router, the servers,
// the Nodes), shared by the two controllers' cycles of that round (docs/design/operator-start.md). Both
// controllers read the same three things from the same cluster, usually within a second of each
// other (their first cycles are queued at the same moment, operator.ts): the second one to ask takes
// the first one's read instead of making its own.
//
// Why the shared read is as fresh as the two reads were: a read is offered only to the other
// controller, only once, and only for `windowMs` after it started (a few seconds, far below the
// shortest interval). So a view is never used by the controller's next cycle, never by a later round
// of either controller, and a cycle that takes it acts on a read that began at most `windowMs`
// before its own would have; the two separate reads of the old way were that far apart as well (the
// two cycles ran side by side). Nothing is cached past the window: an entry is dropped once both
// controllers took it, once its read failed, or once it is older than the window. A failed or
// aborted read is never shared; the controller that waited on it reads on its own. Each controller
// still decides on the view alone, with its own refusals on partial or empty views.
import type { Clock } from '../../base/clock.ts';
import type { Router } from '../../clients/openstack/openstack-types.ts';
import type { ClusterNodes } from './cluster-adapters.ts';
import type { ClusterInstance } from './cluster-view.ts';

/** Reads a value of one cluster: the shared one of this round, or `own` (then offered to the other controller). */
export type ClusterRead = <T>(what: string, own: () => Promise<T>, signal?: AbortSignal) => Promise<T>;

export interface RoundReads {
  /** The reads of one cluster (its key and UID) by one controller ("routegc", "flight"); see firstCycleOnly for what the operator shares. */
  of(cluster: string, reader: string): ClusterRead;
  /** For tests and metrics: reads now on offer. */
  readonly size: number;
}

interface Entry {
  atMs: number;
  value: Promise<unknown>;
  takenBy: string[];
}

/** How long a read is offered to the other controller (ms): a few seconds, far below any interval (the CLI's least is 10 s). */
export const ROUND_READ_WINDOW_MS = 5000;

export function roundReads(o: { clock: Clock; windowMs?: number; readers?: number }): RoundReads {
  const windowMs = o.windowMs ?? ROUND_READ_WINDOW_MS;
  // routegc and flight: once both took a read, nobody else may.
  const readers = o.readers ?? 2;
  // In the order the reads started (re-set on each new read), so the old end is pruned first.
  const entries = new Map<string, Entry>();
  const prune = (now: number): void => {
    for (const [k, e] of entries) {
      if (now - e.atMs <= windowMs) return;
      entries.delete(k);
    }
  };
  const read = async <T>(key: string, reader: string, own: () => Promise<T>, signal?: AbortSignal): Promise<T> => {
    const now = o.clock.now();
    prune(now);
    const e = entries.get(key);
    if (e && !e.takenBy.includes(reader)) {
      e.takenBy.push(reader);
      if (e.takenBy.length >= readers) entries.delete(key);
      try {
        const value = (await e.value) as T;
        signal?.throwIfAborted();
        return value;
      } catch (err) {
        if (signal?.aborted) throw err;
        // The other controller's read failed or was cut by its fence or deadline: this one reads for itself.
        return own();
      }
    }
    const value = own();
    const entry: Entry = { atMs: now, value, takenBy: [reader] };
    entries.delete(key);
    entries.set(key, entry);
    value.catch(() => {
      if (entries.get(key) === entry) entries.delete(key);
    });
    return value;
  };
  return {
    of: (cluster, reader) => (what, own, signal) => read(`${cluster}\u0000${what}`, reader, own, signal),
    get size() {
      return entries.size;
    },
  };
}

/** The cluster's Nodes with the list shared through `read` (condition writes stay the controller's own). */
export function sharedNodeList(nodes: ClusterNodes, read: ClusterRead): ClusterNodes {
  return { list: (signal) => read('nodes', () => nodes.list(signal), signal), setCondition: (...a) => nodes.setCondition(...a) };
}

/** What routegc's and flight's views of the cloud both read. */
export interface RouterAndServers {
  getRouter(id: string, signal?: AbortSignal): Promise<Router | undefined>;
  listServers(signal?: AbortSignal): Promise<ClusterInstance[]>;
}

/** A controller's cloud with the router and the servers shared through `read`; every other call stays its own. */
export function sharedCloud<C extends RouterAndServers>(own: C, read: ClusterRead): C {
  return {
    ...own,
    getRouter: (id: string, signal?: AbortSignal) => read(`router/${id}`, () => own.getRouter(id, signal), signal),
    listServers: (signal?: AbortSignal) => read('servers', () => own.listServers(signal), signal),
  };
}

/** The cluster id round reads are kept under: its key and UID, so a cluster made again under the same name shares nothing with the old one. */
export const roundReadCluster = (key: string, uid: string | undefined): string => `${key}#${uid ?? ''}`;

/**
 * `read` for a runner's first cycle only: each of the router, servers and Nodes is shared the first
 * time the runner reads it, and read on its own every time after. The first cycles of routegc and
 * flight run side by side (operator.ts queues them at one point); their later rounds drift apart
 * with each controller's own jitter, so a later read would meet the other controller's only by
 * chance, a routegc cycle that took flight's reads would leave no call of its own in the cloud's
 * request log the bench and the isolation test read cycles from (bench/operator/operator-stats.ts),
 * and a read that old is not worth the doubt.
 */
export function firstCycleOnly(read: ClusterRead): ClusterRead {
  // One bit per kind read so far: small, since every runner of every cluster holds one.
  let done = 0;
  return (what, own, signal) => {
    const bit = what === 'nodes' ? 1 : what === 'servers' ? 2 : 4;
    if (done & bit) return own();
    done |= bit;
    return read(what, own, signal);
  };
}
