// What the socket and handle paths share: legs that read into slices of the read buffer pool, a
// client waiting with its slice while upstreams are dialled, and the owner that gives a closed
// connection's slices back before the frontend hears of the close.
import type { HostPort } from '../../config/fields.ts';
import type { ProbeReason } from '../../probe/probe-result.ts';
import type { ReadBufferPool } from './read-buffer-pool.ts';
import type { DialResult, PendingClient } from './relay.ts';
import type { RelayedConnection, RelayOwner, RelayTiming } from './relayed-connection.ts';

export type LegOutcome<L> = { ok: true; leg: L; latencyMs: number } | { ok: false; reason: ProbeReason; detail: string; latencyMs: number };

/** The owner of a path's connections: one object per frontend. */
export abstract class SlicedPath implements RelayOwner {
  readonly buffers: ReadBufferPool;
  readonly #owner: RelayOwner;

  constructor(buffers: ReadBufferPool, owner: RelayOwner) {
    this.buffers = buffers;
    this.#owner = owner;
  }

  connectionClosed(conn: RelayedConnection): void {
    // Both legs are closed: no write refers to either slice any more.
    if (conn.clientSlice) this.buffers.give(conn.clientSlice);
    if (conn.upstreamSlice) this.buffers.give(conn.upstreamSlice);
    this.#owner.connectionClosed(conn);
  }

  noAnswer(conn: RelayedConnection): void {
    this.#owner.noAnswer(conn);
  }
}

/** A client leg `L` of path `P` with its read slice, and the upstream leg the last dial connected with its own. */
export abstract class PendingLegs<L, P extends SlicedPath> implements PendingClient {
  protected readonly path: P;
  protected readonly buffers: ReadBufferPool;
  protected readonly client: L;
  protected readonly clientSlice: Buffer;
  protected upstream: L | undefined = undefined;
  protected upstreamSlice: Buffer | undefined = undefined;

  constructor(path: P, client: L, clientSlice: Buffer) {
    this.path = path;
    this.buffers = path.buffers;
    this.client = client;
    this.clientSlice = clientSlice;
  }

  abstract readonly gone: boolean;

  async dial(target: HostPort, timeoutMs: number): Promise<DialResult> {
    const slice = this.buffers.take();
    const out = await this.connect(target, timeoutMs, slice);
    if (!out.ok) {
      this.buffers.give(slice); // never read into: the leg never connected
      return out;
    }
    this.upstream = out.leg;
    this.upstreamSlice = slice;
    return { ok: true, latencyMs: out.latencyMs };
  }

  /** Connects an upstream leg that reads into `slice` once relayed. */
  protected abstract connect(target: HostPort, timeoutMs: number, slice: Buffer): Promise<LegOutcome<L>>;
  abstract join(upstreamKey: string, timing: RelayTiming): RelayedConnection;
  abstract discardUpstream(): void;
  abstract abandon(freed: () => void): void;
}
