// --relay handle: bare libuv TCP handles on both legs (handle-relay.ts moves the bytes,
// handle-connect.ts dials, handle-internals.ts finds what both use). Each leg reads into a slice of
// the read buffer pool, given back when the connection has closed. An accepted connection that is
// not a TCP handle of this Node runs on the socket path.
import type { HostPort } from '../../config/fields.ts';
import type { AcceptedHandle } from '../adopt-socket.ts';
import { connectHandle } from './handle-connect.ts';
import type { RelayInternals, TcpHandle } from './handle-internals.ts';
import { HandleConnection } from './handle-relay.ts';
import type { ReadBufferPool } from './read-buffer-pool.ts';
import type { DialResult, PendingClient, Relay, RelayPath } from './relay.ts';
import type { RelayedConnection, RelayOwner, RelayTiming, SlicedRelayOptions } from './relayed-connection.ts';
import { SocketPath } from './socket-path.ts';

/** The handle path of one frontend; the owner of its connections, giving their slices back before the frontend hears of the close. */
export class HandlePath implements Relay, RelayOwner {
  readonly path: RelayPath = 'handle';
  readonly internals: RelayInternals;
  readonly buffers: ReadBufferPool;
  readonly #owner: RelayOwner;
  /** For an accepted connection that is not a TCP handle. */
  readonly #sockets: SocketPath;

  constructor(internals: RelayInternals, buffers: ReadBufferPool, owner: RelayOwner) {
    this.internals = internals;
    this.buffers = buffers;
    this.#owner = owner;
    this.#sockets = new SocketPath(buffers, owner);
  }

  accept(accepted: AcceptedHandle): PendingClient | undefined {
    if (!(accepted instanceof this.internals.TCP)) return this.#sockets.accept(accepted);
    return new PendingHandle(this, accepted, this.buffers.take());
  }

  /** Two connected handles that have not read yet become a relayed connection. */
  join(client: TcpHandle, upstream: TcpHandle, upstreamKey: string, opts: SlicedRelayOptions): RelayedConnection {
    return new HandleConnection(this.internals, client, upstream, upstreamKey, this, opts);
  }

  connectionClosed(conn: RelayedConnection): void {
    // Both handles are closed: no write refers to either slice any more.
    if (conn.clientSlice) this.buffers.give(conn.clientSlice);
    if (conn.upstreamSlice) this.buffers.give(conn.upstreamSlice);
    this.#owner.connectionClosed(conn);
  }

  noAnswer(conn: RelayedConnection): void {
    this.#owner.noAnswer(conn);
  }
}

class PendingHandle implements PendingClient {
  readonly #path: HandlePath;
  readonly #client: TcpHandle;
  readonly #clientSlice: Buffer;
  #upstream: TcpHandle | undefined = undefined;
  #upstreamSlice: Buffer | undefined = undefined;

  constructor(path: HandlePath, client: TcpHandle, clientSlice: Buffer) {
    this.#path = path;
    this.#client = client;
    this.#clientSlice = clientSlice;
  }

  /** A client handle that is not read from yet reports nothing: its going away shows once relayed. */
  get gone(): boolean {
    return false;
  }

  async dial(target: HostPort, timeoutMs: number): Promise<DialResult> {
    const { buffers, internals } = this.#path;
    const slice = buffers.take();
    const out = await connectHandle(internals, target.host, target.port, timeoutMs);
    if (!out.ok) {
      buffers.give(slice);
      return out;
    }
    this.#upstream = out.handle;
    this.#upstreamSlice = slice;
    return { ok: true, latencyMs: out.latencyMs };
  }

  join(upstreamKey: string, timing: RelayTiming): RelayedConnection {
    return this.#path.join(this.#client, this.#upstream!, upstreamKey, { ...timing, clientSlice: this.#clientSlice, upstreamSlice: this.#upstreamSlice! });
  }

  discardUpstream(): void {
    // Never read from: its slice is free at once.
    this.#upstream!.close();
    this.#path.buffers.give(this.#upstreamSlice!);
  }

  abandon(freed: () => void): void {
    // Never read from either.
    this.#client.close();
    freed();
    this.#path.buffers.give(this.#clientSlice);
  }
}
