// Moves bytes between a client and an upstream, both ways, and nothing else: explicit half-close,
// one idle timer, TCP keep-alive on both legs. Per chunk it only writes (no copies, no counters,
// no logs); byte counts come from the sockets themselves.
import type { Socket } from 'node:net';

export interface ForwardOptions {
  /** Close the pair after this long without a byte either way; 0 means never. */
  idleTimeoutMs: number;
  /** Called once, after both sockets have closed. */
  onClose: (conn: ForwardedConnection) => void;
  /** Start time (ms) from the caller's clock; default Date.now(). */
  startedAt?: number;
}

/**
 * Keep-alive probes after 15 s of silence, every 5 s, 3 unanswered: a blackholed peer is found in
 * about 30 s, inside client-go's own 30 s + 15 s HTTP/2 ping budget (reference notes, section 0).
 */
const KEEPALIVE = { enable: true, initialDelay: 15_000, interval: 5_000, count: 3 } as const;

export class ForwardedConnection {
  readonly client: Socket;
  readonly upstream: Socket;
  readonly upstreamKey: string;
  readonly startedAt: number;
  #open = 2;

  /** Takes ownership of both sockets; the client must not have been read from yet (paused). */
  constructor(client: Socket, upstream: Socket, upstreamKey: string, opts: ForwardOptions) {
    this.client = client;
    this.upstream = upstream;
    this.upstreamKey = upstreamKey;
    this.startedAt = opts.startedAt ?? Date.now();
    const abort = () => this.destroy();
    const closed = () => {
      if (--this.#open === 0) opts.onClose(this);
    };
    for (const s of [client, upstream]) {
      s.setKeepAlive(KEEPALIVE);
      s.setNoDelay(true);
      s.on('error', abort);
      s.on('close', (hadError: boolean) => {
        if (hadError) abort();
        closed();
      });
    }
    // The client socket sees every byte either way (read = to upstream, write = to client), so one
    // timer on it measures idleness of the whole pair.
    if (opts.idleTimeoutMs > 0) {
      client.setTimeout(opts.idleTimeoutMs);
      client.on('timeout', abort);
    }
    relay(client, upstream);
    relay(upstream, client);
    client.resume();
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

/**
 * One direction with backpressure. A FIN from one side becomes end() on the other, and the reverse
 * direction keeps flowing until its own FIN (half-close); with allowHalfOpen on both sockets Node
 * closes a socket only once both of its directions are done.
 */
function relay(from: Socket, to: Socket): void {
  from.on('data', (chunk: Buffer) => {
    if (!to.write(chunk)) from.pause();
  });
  to.on('drain', () => from.resume());
  from.on('end', () => to.end());
}
