// The established connections of one frontend, by upstream: closes an upstream's connections spread
// over a window (dead or drained upstream), waits for all to finish (shutdown), keeps byte totals,
// and closes idle ones with one shared sweep.
import { planCloseDelays } from './plan-close-delays.ts';
import type { RelayedConnection } from './relay/relayed-connection.ts';

/**
 * The idle sweep's period for an idle timeout: an eighth of it, between 10 ms and 1 s. A connection
 * is closed after between idleTimeout and idleTimeout plus two periods without a byte (at most a
 * quarter more for short timeouts, 2 s more for long ones).
 */
export function sweepPeriodMs(idleTimeoutMs: number): number {
  return Math.min(1000, Math.max(10, Math.floor(idleTimeoutMs / 8)));
}

export interface ByteTotals {
  toUpstream: number;
  toClient: number;
}

export class ConnectionSet {
  readonly #byUpstream = new Map<string, Set<RelayedConnection>>();
  readonly #closedBytes = new Map<string, ByteTotals>();
  readonly #totals = new Map<string, number>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #idleWaiters: (() => void)[] = [];
  #size = 0;
  /**
   * One timer for every connection's idle timeout instead of one per socket: a timer per socket is
   * an object per connection and a timer-list update at every read and write (Node refreshes it).
   */
  #sweep: NodeJS.Timeout | undefined;
  #sweepMs = 0;
  #sweptAt = 0;

  get size(): number {
    return this.#size;
  }

  add(conn: RelayedConnection): void {
    let set = this.#byUpstream.get(conn.upstreamKey);
    if (!set) this.#byUpstream.set(conn.upstreamKey, (set = new Set()));
    set.add(conn);
    this.#size++;
    this.#totals.set(conn.upstreamKey, (this.#totals.get(conn.upstreamKey) ?? 0) + 1);
    if (conn.idleTimeoutMs > 0) this.#sweepFor(conn.idleTimeoutMs);
  }

  /** Runs the sweep at least as often as this idle timeout needs. */
  #sweepFor(idleTimeoutMs: number): void {
    const ms = sweepPeriodMs(idleTimeoutMs);
    if (this.#sweep !== undefined && this.#sweepMs <= ms) return;
    clearInterval(this.#sweep);
    this.#sweepMs = ms;
    this.#sweptAt = performance.now();
    this.#sweep = setInterval(() => this.sweepIdle(), ms);
    this.#sweep.unref();
  }

  /**
   * Closes connections that moved no byte for their idle timeout. Each connection's relays set
   * `active` on every chunk; the sweep clears it and adds the time since its last run to the quiet
   * time of those that stayed inactive. Public for tests; the timer calls it.
   */
  sweepIdle(elapsedMs = Math.round(performance.now() - this.#sweptAt)): void {
    // Whole milliseconds: quiet times stay small integers, which V8 stores without a box.
    this.#sweptAt += elapsedMs;
    for (const set of this.#byUpstream.values()) {
      for (const c of set) {
        if (c.active) {
          c.active = false;
          c.quietMs = 0;
        } else if (c.idleTimeoutMs > 0 && (c.quietMs += elapsedMs) >= c.idleTimeoutMs) {
          c.destroy();
        }
      }
    }
  }

  /** Called from the connection's onClose; records its bytes. */
  remove(conn: RelayedConnection): void {
    const set = this.#byUpstream.get(conn.upstreamKey);
    if (!set?.delete(conn)) return;
    this.#size--;
    const totals = this.#closedBytes.get(conn.upstreamKey) ?? { toUpstream: 0, toClient: 0 };
    totals.toUpstream += conn.bytesToUpstream;
    totals.toClient += conn.bytesToClient;
    this.#closedBytes.set(conn.upstreamKey, totals);
    if (this.#size === 0) {
      clearInterval(this.#sweep);
      this.#sweep = undefined;
      for (const wake of this.#idleWaiters.splice(0)) wake();
    }
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

  /** The upstream's open connections that started at or before `cutoff` (ms), oldest first. */
  settled(upstreamKey: string, cutoff: number): RelayedConnection[] {
    const out: RelayedConnection[] = [];
    for (const c of this.#byUpstream.get(upstreamKey) ?? []) {
      if (c.startedAt > cutoff) break;
      if (!c.ended) out.push(c);
    }
    return out;
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
        if (conn.ended) return;
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
    clearInterval(this.#sweep);
    this.#sweep = undefined;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    for (const set of this.#byUpstream.values()) for (const c of set) c.destroy();
  }
}
