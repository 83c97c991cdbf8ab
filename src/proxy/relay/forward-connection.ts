// Moves bytes between a client and an upstream, both ways, and nothing else: explicit half-close,
// idleness noted for the connection set's shared sweep. Each socket reads into a preallocated slice
// (net's `onread`) and the slice is written on as it is: per chunk one read, one write and a Buffer
// view; no copy, no log. Byte counts come from the sockets themselves.
//
// Per connection this allocates the two sockets and one ForwardedConnection, and no closure: every
// listener and the read callback are functions of this module that find their connection through
// the socket they are called on (`this`). Idle connections are what a node holds by the thousand
// (docs/design/connection-cost.md has the measurements).
import { Socket } from 'node:net';
import { noteFirstBytes } from './first-byte-watch.ts';
import { SharedConnectionState, type RelayOwner, type SlicedRelayOptions } from './relayed-connection.ts';

/**
 * TCP keep-alive for the upstream leg, set once the connect has succeeded (connect-upstream.ts):
 * probes after 15 s of silence, every 5 s, 3 unanswered; a blackholed apiserver is found in about
 * 30 s, inside client-go's own 30 s + 15 s HTTP/2 ping budget (reference notes, section 0).
 * The client leg gets keep-alive from the listener's options (15 s idle, libuv's probe interval).
 */
export const UPSTREAM_KEEPALIVE = { enable: true, initialDelay: 15_000, interval: 5_000, count: 3 } as const;

const EMPTY = Buffer.alloc(0);

/** A socket of the data path: knows the connection it is a leg of, once the forwarder has it. */
export class RelaySocket extends Socket {
  conn: ForwardedConnection | undefined = undefined;
  /** While an upstream socket connects (connect-upstream.ts). */
  attempt: PendingConnect | undefined = undefined;
}

/** An upstream connect in flight, told how it ends (connect-upstream.ts's ConnectAttempt). */
export interface PendingConnect {
  connected(socket: RelaySocket): void;
  failed(socket: RelaySocket, err: Error): void;
  timedOut(socket: RelaySocket): void;
}

/**
 * The `onread.callback` of both legs (net calls it on the socket that read). Writes the bytes just
 * read to the other leg, and when the kernel did not take them all at once (the rest still points
 * into the read slice) stops reading until they are out, so the slice is never read into while
 * referenced.
 */
export function relayRead(this: RelaySocket, bytes: number, slice: Buffer): boolean {
  const conn = this.conn!;
  conn.active = true;
  const fromClient = this === conn.client;
  if (conn.watchingFirstByte) noteFirstBytes(conn, fromClient);
  const to = fromClient ? conn.upstream : conn.client;
  to.write(slice.subarray(0, bytes));
  if (to.writableLength === 0) return true;
  // An empty write's callback runs once everything queued before it has been written.
  to.write(EMPTY, conn.resumeWhenFlushed(fromClient));
  return false;
}

/**
 * The one 'error' listener of a relay socket, for its whole life (one listener, never removed): a
 * connect attempt fails, a forwarded connection closes both legs, and a client not forwarded yet is
 * closed (the frontend sees the close).
 */
export function relayError(this: RelaySocket, err: Error): void {
  if (this.conn) this.conn.destroy();
  else if (this.attempt) this.attempt.failed(this, err);
  else this.destroy();
}

function onLegClose(this: RelaySocket, hadError: boolean): void {
  this.conn!.legClosed(hadError);
}

/** A FIN from one side becomes end() on the other; the reverse direction keeps flowing until its own FIN. */
function onLegEnd(this: RelaySocket): void {
  const conn = this.conn!;
  (this === conn.client ? conn.upstream : conn.client).end();
}

export class ForwardedConnection extends SharedConnectionState {
  readonly client: RelaySocket;
  readonly upstream: RelaySocket;
  /** A byte moved since the idle sweep last looked; the sweep clears it. */
  active = true;
  #open = 2;
  /** Created at the first backpressure of each direction only: most connections never need one. */
  #resumeClient: ((err?: Error | null) => void) | undefined = undefined;
  #resumeUpstream: ((err?: Error | null) => void) | undefined = undefined;

  /**
   * Takes ownership of both sockets. Both must be paused, created with `onread` callbacks of
   * relayRead on their slices, allowHalfOpen, and have relayError as their 'error' listener.
   */
  constructor(client: RelaySocket, upstream: RelaySocket, upstreamKey: string, owner: RelayOwner, opts: SlicedRelayOptions) {
    super(upstreamKey, owner, opts);
    this.client = client;
    this.upstream = upstream;
    client.conn = this;
    upstream.conn = this;
    client.on('close', onLegClose);
    upstream.on('close', onLegClose);
    // With allowHalfOpen Node closes a socket once both its directions are done.
    client.on('end', onLegEnd);
    upstream.on('end', onLegEnd);
    upstream.resume();
    client.resume();
  }

  /** @internal One leg's 'close'. */
  legClosed(hadError: boolean): void {
    if (hadError) this.destroy();
    if (--this.#open === 0) this.closed();
  }

  get upstreamClosed(): boolean {
    return this.upstream.destroyed;
  }

  /** @internal The write callback that resumes reading the direction's source once its bytes are out. */
  resumeWhenFlushed(fromClient: boolean): (err?: Error | null) => void {
    if (fromClient) return (this.#resumeClient ??= (err) => resumeUnlessGone(this.client, err));
    return (this.#resumeUpstream ??= (err) => resumeUnlessGone(this.upstream, err));
  }

  get ended(): boolean {
    return this.client.destroyed && this.upstream.destroyed;
  }

  /** Bytes received from the client and passed on to the upstream. */
  get bytesToUpstream(): number {
    return this.client.bytesRead;
  }

  /** Bytes received from the upstream and passed on to the client. */
  get bytesToClient(): number {
    return this.upstream.bytesRead;
  }

  /** Abortive close of both legs; idempotent. */
  destroy(): void {
    this.client.destroy();
    this.upstream.destroy();
  }
}

function resumeUnlessGone(from: Socket, err?: Error | null): void {
  if (!err && !from.destroyed) from.resume();
}
