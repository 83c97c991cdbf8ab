// What every relayed connection is and keeps, whichever data path moves its bytes (forward-connection.ts
// on net.Socket, handle-relay.ts on bare handles, native-relay.ts in C): the connection set, the idle
// sweep, the first-byte watch and the frontend read these fields and nothing of the legs. The state
// lives on the connection object itself (a base class, not an object per connection).
import { endFirstByteWatch, type FirstByteWatched } from './first-byte-watch.ts';

/** An established client-upstream pair as the set, the sweep and the frontend see it. */
export interface RelayedConnection {
  readonly upstreamKey: string;
  /** Start time (ms) from the frontend's clock. */
  readonly startedAt: number;
  /** 0: never closed for idleness. */
  readonly idleTimeoutMs: number;
  readonly firstByteTimeoutMs: number;
  /** A byte moved since the idle sweep last looked; the sweep clears it. */
  active: boolean;
  /** Milliseconds the idle sweep has seen no byte (reset when it finds the connection active). */
  quietMs: number;
  readonly bytesToUpstream: number;
  readonly bytesToClient: number;
  /** The byte counts rebalancing saw when it last looked at this connection (-1: never), to tell a quiet one. */
  seenToUpstream: number;
  seenToClient: number;
  /** Both legs are closed or being closed: nothing left to close. */
  readonly ended: boolean;
  /** The read slices of the client and of the upstream (given back once it closed); undefined: none (native path). */
  readonly clientSlice: Buffer | undefined;
  readonly upstreamSlice: Buffer | undefined;
  /** Abortive close of both legs; idempotent. */
  destroy(): void;
}

/** What a relayed connection tells its owner: one object per frontend, not a callback per connection. */
export interface RelayOwner {
  /** Both legs have closed: no write refers to either read slice any more. Called once. */
  connectionClosed(conn: RelayedConnection): void;
  /** After the client's first bytes the upstream stayed silent firstByteTimeoutMs (the connection itself is left alone). */
  noAnswer(conn: RelayedConnection): void;
}

/** The frontend's settings for one connection, whichever path relays it. */
export interface RelayTiming {
  /** Close the pair after this long without a byte either way; 0 means never (see ConnectionSet's sweep). */
  idleTimeoutMs: number;
  /** Start time (ms) from the caller's clock. */
  startedAt: number;
  /** After the client's first bytes, how long the upstream may stay silent; 0 or absent: forever. */
  firstByteTimeoutMs?: number;
}

export interface RelayOptions extends RelayTiming {
  /** The read slices of the client and of the upstream; absent where the path reads into none of the pool's. */
  clientSlice?: Buffer;
  upstreamSlice?: Buffer;
}

/** The options of a path that reads into the pool's slices (socket, handle). */
export interface SlicedRelayOptions extends RelayTiming {
  clientSlice: Buffer;
  upstreamSlice: Buffer;
}

/**
 * The fields and owner calls the three connection classes share. A subclass moves the bytes, says
 * how many moved, whether a byte moved lately (`active`) and when its legs are closed, and calls
 * `closed()` once when both are.
 */
export abstract class SharedConnectionState implements RelayedConnection, FirstByteWatched {
  readonly upstreamKey: string;
  readonly startedAt: number;
  readonly idleTimeoutMs: number;
  readonly firstByteTimeoutMs: number;
  readonly clientSlice: Buffer | undefined;
  readonly upstreamSlice: Buffer | undefined;
  abstract active: boolean;
  quietMs = 0;
  seenToUpstream = -1;
  seenToClient = -1;
  /** The first-byte watch is on: the relay reports first bytes (one property test per chunk). */
  watchingFirstByte: boolean;
  firstByteTimer: NodeJS.Timeout | undefined = undefined;
  readonly #owner: RelayOwner;

  constructor(upstreamKey: string, owner: RelayOwner, opts: RelayOptions) {
    this.upstreamKey = upstreamKey;
    this.startedAt = opts.startedAt;
    this.idleTimeoutMs = opts.idleTimeoutMs;
    this.firstByteTimeoutMs = opts.firstByteTimeoutMs ?? 0;
    this.watchingFirstByte = this.firstByteTimeoutMs > 0;
    this.clientSlice = opts.clientSlice;
    this.upstreamSlice = opts.upstreamSlice;
    this.#owner = owner;
  }

  abstract readonly bytesToUpstream: number;
  abstract readonly bytesToClient: number;
  abstract readonly ended: boolean;
  /** The upstream leg is closed or closing (the first-byte watch's question). */
  abstract readonly upstreamClosed: boolean;
  abstract destroy(): void;

  /** @internal The first-byte watch's verdict (first-byte-watch.ts). */
  noAnswer(): void {
    this.#owner.noAnswer(this);
  }

  /** Both legs are closed: the watch ends and the owner hears of it (once: the subclass calls this once). */
  protected closed(): void {
    endFirstByteWatch(this);
    this.#owner.connectionClosed(this);
  }
}
