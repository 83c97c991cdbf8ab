// Moves bytes between a client and an upstream, both ways, and nothing else: explicit half-close,
// one idle timer. Each socket reads into a preallocated slice (net's `onread`) and the slice is
// written on as it is: per chunk one read, one write and a Buffer view; no copy, no closure, no log.
// Byte counts come from the sockets themselves.
import type { Socket } from 'node:net';

export interface ForwardOptions {
  /** Close the pair after this long without a byte either way; 0 means never. */
  idleTimeoutMs: number;
  /** Called once, after both sockets have closed (no write refers to either read slice any more). */
  onClose: (conn: ForwardedConnection) => void;
  /** Start time (ms) from the caller's clock; default Date.now(). */
  startedAt?: number;
  /** After the client's first bytes, how long the upstream may stay silent; 0 or absent: forever. */
  firstByteTimeoutMs?: number;
  /** Called once when the upstream stayed silent that long (the connection itself is left alone). */
  onNoAnswer?: (conn: ForwardedConnection) => void;
}

/**
 * TCP keep-alive for the upstream leg, set once the connect has succeeded (connect-upstream.ts):
 * probes after 15 s of silence, every 5 s, 3 unanswered; a blackholed apiserver is found in about
 * 30 s, inside client-go's own 30 s + 15 s HTTP/2 ping budget (reference notes, section 0).
 * The client leg gets keep-alive from the listener's options (15 s idle, libuv's probe interval).
 */
export const UPSTREAM_KEEPALIVE = { enable: true, initialDelay: 15_000, interval: 5_000, count: 3 } as const;

const EMPTY = Buffer.alloc(0);

/**
 * One direction. Its onRead is the reading socket's `onread.callback`: it writes the bytes just
 * read, and when the kernel did not take them all at once (the rest still points into the read
 * slice) it stops reading until they are out, so the slice is never read into while referenced.
 */
export class Relay {
  from: Socket | undefined;
  to: Socket | undefined;
  /** Called before the first chunk is passed on, then dropped (one property test per chunk). */
  onFirst: (() => void) | undefined;

  readonly onRead = (bytes: number, slice: Buffer): boolean => {
    if (this.onFirst !== undefined) {
      const first = this.onFirst;
      this.onFirst = undefined;
      first();
    }
    const to = this.to!;
    to.write(slice.subarray(0, bytes));
    if (to.writableLength === 0) return true;
    // An empty write's callback runs once everything queued before it has been written.
    to.write(EMPTY, this.#flushed);
    return false;
  };

  readonly #flushed = (err?: Error | null): void => {
    const from = this.from!;
    if (!err && !from.destroyed) from.resume();
  };
}

export class ForwardedConnection {
  readonly client: Socket;
  readonly upstream: Socket;
  readonly upstreamKey: string;
  readonly startedAt: number;
  #open = 2;

  /**
   * Takes ownership of both sockets. Both must be paused and created with `onread` callbacks of
   * `toUpstream` (client) and `toClient` (upstream), and allowHalfOpen.
   */
  constructor(client: Socket, upstream: Socket, upstreamKey: string, relays: { toUpstream: Relay; toClient: Relay }, opts: ForwardOptions) {
    this.client = client;
    this.upstream = upstream;
    this.upstreamKey = upstreamKey;
    this.startedAt = opts.startedAt ?? Date.now();
    relays.toUpstream.from = client;
    relays.toUpstream.to = upstream;
    relays.toClient.from = upstream;
    relays.toClient.to = client;
    const abort = () => this.destroy();
    const silence = this.#watchFirstByte(relays, opts);
    const closed = (hadError: boolean) => {
      if (hadError) abort();
      if (--this.#open === 0) {
        clearTimeout(silence());
        opts.onClose(this);
      }
    };
    client.on('error', abort);
    upstream.on('error', abort);
    client.on('close', closed);
    upstream.on('close', closed);
    // A FIN from one side becomes end() on the other; the reverse direction keeps flowing until its
    // own FIN (half-close). With allowHalfOpen Node closes a socket once both its directions are done.
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    // The client socket sees every byte either way (read = to upstream, write = to client), so one
    // timer on it measures idleness of the whole pair.
    if (opts.idleTimeoutMs > 0) {
      client.setTimeout(opts.idleTimeoutMs);
      client.on('timeout', abort);
    }
    upstream.resume();
    client.resume();
  }

  /**
   * Arms a timer at the client's first bytes that the upstream's first bytes disarm; returns a
   * getter of the timer for clean-up. Nothing at all when the timeout is off.
   */
  #watchFirstByte(relays: { toUpstream: Relay; toClient: Relay }, opts: ForwardOptions): () => NodeJS.Timeout | undefined {
    const { firstByteTimeoutMs: ms, onNoAnswer } = opts;
    let timer: NodeJS.Timeout | undefined;
    if (!ms || ms <= 0 || !onNoAnswer) return () => timer;
    relays.toUpstream.onFirst = () => {
      if (this.upstream.bytesRead > 0) return;
      timer = setTimeout(() => {
        if (this.upstream.bytesRead === 0 && !this.upstream.destroyed) onNoAnswer(this);
      }, ms);
      timer.unref();
    };
    relays.toClient.onFirst = () => clearTimeout(timer);
    return () => timer;
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
