// The established connections of one frontend, by upstream: closes an upstream's connections spread
// over a window (dead or drained upstream), waits for all to finish (shutdown), keeps byte totals.
import type { ForwardedConnection } from './forward-connection.ts';
import { planCloseDelays } from './plan-close-delays.ts';

export interface ByteTotals {
  toUpstream: number;
  toClient: number;
}

export class ConnectionSet {
  readonly #byUpstream = new Map<string, Set<ForwardedConnection>>();
  readonly #closedBytes = new Map<string, ByteTotals>();
  readonly #totals = new Map<string, number>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #idleWaiters: (() => void)[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  add(conn: ForwardedConnection): void {
    let set = this.#byUpstream.get(conn.upstreamKey);
    if (!set) this.#byUpstream.set(conn.upstreamKey, (set = new Set()));
    set.add(conn);
    this.#size++;
    this.#totals.set(conn.upstreamKey, (this.#totals.get(conn.upstreamKey) ?? 0) + 1);
  }

  /** Called from the connection's onClose; records its bytes. */
  remove(conn: ForwardedConnection): void {
    const set = this.#byUpstream.get(conn.upstreamKey);
    if (!set?.delete(conn)) return;
    this.#size--;
    const totals = this.#closedBytes.get(conn.upstreamKey) ?? { toUpstream: 0, toClient: 0 };
    totals.toUpstream += conn.bytesToUpstream;
    totals.toClient += conn.bytesToClient;
    this.#closedBytes.set(conn.upstreamKey, totals);
    if (this.#size === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
  }

  /** Connections ever established to the upstream. */
  totalFor(upstreamKey: string): number {
    return this.#totals.get(upstreamKey) ?? 0;
  }

  countFor(upstreamKey: string): number {
    return this.#byUpstream.get(upstreamKey)?.size ?? 0;
  }

  /** Bytes of closed and open connections so far. */
  bytesFor(upstreamKey: string): ByteTotals {
    const closed = this.#closedBytes.get(upstreamKey) ?? { toUpstream: 0, toClient: 0 };
    const totals = { ...closed };
    for (const c of this.#byUpstream.get(upstreamKey) ?? []) {
      totals.toUpstream += c.bytesToUpstream;
      totals.toClient += c.bytesToClient;
    }
    return totals;
  }

  /** Connections to the upstream that started at or before `cutoff` (ms): the long-lived load. */
  settledCount(upstreamKey: string, cutoff: number): number {
    let n = 0;
    // A Set iterates in insertion order, which is start order: stop at the first young one.
    for (const c of this.#byUpstream.get(upstreamKey) ?? []) {
      if (c.startedAt > cutoff) break;
      n++;
    }
    return n;
  }

  /** The upstream's oldest open connection, if it started at or before `cutoff`. */
  oldest(upstreamKey: string, cutoff: number): ForwardedConnection | undefined {
    for (const c of this.#byUpstream.get(upstreamKey) ?? []) {
      if (c.startedAt > cutoff) return undefined;
      if (!c.client.destroyed || !c.upstream.destroyed) return c;
    }
    return undefined;
  }

  /**
   * Closes the upstream's current connections, oldest first, each at a jittered point of the
   * spread window. Connections that end by themselves before their turn are skipped. Returns how
   * many were scheduled; onClosed counts the ones this actually closed.
   */
  closeSpread(upstreamKey: string, spreadMs: number, onClosed: () => void, random?: () => number): number {
    const conns = [...(this.#byUpstream.get(upstreamKey) ?? [])];
    const delays = planCloseDelays(conns.length, spreadMs, random);
    conns.forEach((conn, i) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        if (conn.client.destroyed && conn.upstream.destroyed) return;
        conn.destroy();
        onClosed();
      }, delays[i]);
      this.#timers.add(timer);
    });
    return conns.length;
  }

  /** Resolves when no connection is left or after graceMs, whichever is first. */
  async waitIdle(graceMs: number): Promise<void> {
    if (this.#size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.#idleWaiters.push(resolve);
      timer = setTimeout(resolve, graceMs);
    });
    clearTimeout(timer);
  }

  /** Abortive: every connection and pending close now. */
  destroyAll(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    for (const set of this.#byUpstream.values()) for (const c of set) c.destroy();
  }
}
