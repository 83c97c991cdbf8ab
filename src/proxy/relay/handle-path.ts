// --relay handle: bare libuv TCP handles on both legs (handle-relay.ts moves the bytes,
// handle-connect.ts dials, handle-internals.ts finds what both use). Each leg reads into a slice of
// the read buffer pool, given back when the connection has closed. An accepted connection that is
// not a TCP handle of this Node runs on the socket path.
import type { HostPort } from '../../config/fields.ts';
import type { AcceptedHandle } from '../adopt-socket.ts';
import type { ReadBufferPool } from './read-buffer-pool.ts';
import { connectHandle } from './handle-connect.ts';
import type { RelayInternals, TcpHandle } from './handle-internals.ts';
import { HandleConnection } from './handle-relay.ts';
import type { PendingClient, Relay, RelayPath } from './relay.ts';
import type { RelayedConnection, RelayOwner, RelayTiming, SlicedRelayOptions } from './relayed-connection.ts';
import { PendingLegs, SlicedPath, type LegOutcome } from './sliced-path.ts';
import { SocketPath } from './socket-path.ts';

/** The handle path of one frontend, and the owner of its connections. */
export class HandlePath extends SlicedPath implements Relay {
  readonly path: RelayPath = 'handle';
  readonly internals: RelayInternals;
  /** For an accepted connection that is not a TCP handle. */
  readonly #sockets: SocketPath;

  constructor(internals: RelayInternals, buffers: ReadBufferPool, owner: RelayOwner) {
    super(buffers, owner);
    this.internals = internals;
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
}

class PendingHandle extends PendingLegs<TcpHandle, HandlePath> {
  /** A client handle that is not read from yet reports nothing: its going away shows once relayed. */
  get gone(): boolean {
    return false;
  }

  protected async connect(target: HostPort, timeoutMs: number): Promise<LegOutcome<TcpHandle>> {
    const out = await connectHandle(this.path.internals, target.host, target.port, timeoutMs);
    return out.ok ? { ok: true, leg: out.handle, latencyMs: out.latencyMs } : out;
  }

  join(upstreamKey: string, timing: RelayTiming): RelayedConnection {
    const opts = { ...timing, clientSlice: this.clientSlice, upstreamSlice: this.upstreamSlice! };
    return this.path.join(this.client, this.upstream!, upstreamKey, opts);
  }

  discardUpstream(): void {
    // Never read from: its slice is free at once.
    this.upstream!.close();
    this.buffers.give(this.upstreamSlice!);
  }

  abandon(freed: () => void): void {
    // Never read from either.
    this.client.close();
    freed();
    this.buffers.give(this.clientSlice);
  }
}
