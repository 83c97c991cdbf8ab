// --relay socket: net.Socket on both legs (forward-connection.ts moves the bytes, connect-upstream.ts
// dials). Each leg reads into a slice of the read buffer pool, given back once no write can refer to
// it any more: when the leg is closed.
import type { Socket } from 'node:net';
import type { HostPort } from '../../config/fields.ts';
import { socketOnHandle, type AcceptedHandle } from '../adopt-socket.ts';
import { connectUpstream } from './connect-upstream.ts';
import { ForwardedConnection, relayError, relayRead, type RelaySocket } from './forward-connection.ts';
import type { ReadBufferPool } from './read-buffer-pool.ts';
import type { DialResult, PendingClient, Relay, RelayPath } from './relay.ts';
import type { RelayedConnection, RelayOwner, RelayTiming } from './relayed-connection.ts';

/** The socket path of one frontend; the owner of its connections, giving their slices back before the frontend hears of the close. */
export class SocketPath implements Relay, RelayOwner {
  readonly path: RelayPath = 'socket';
  readonly buffers: ReadBufferPool;
  readonly #owner: RelayOwner;

  constructor(buffers: ReadBufferPool, owner: RelayOwner) {
    this.buffers = buffers;
    this.#owner = owner;
  }

  accept(accepted: AcceptedHandle): PendingClient | undefined {
    const slice = this.buffers.take();
    let client: RelaySocket;
    try {
      client = socketOnHandle(accepted, { buffer: slice, callback: relayRead });
    } catch {
      this.buffers.give(slice);
      accepted.close();
      return undefined;
    }
    client.on('error', relayError);
    return new PendingSocket(this, client, slice);
  }

  connectionClosed(conn: RelayedConnection): void {
    // Both sockets are closed: no write refers to either slice any more.
    if (conn.clientSlice) this.buffers.give(conn.clientSlice);
    if (conn.upstreamSlice) this.buffers.give(conn.upstreamSlice);
    this.#owner.connectionClosed(conn);
  }

  noAnswer(conn: RelayedConnection): void {
    this.#owner.noAnswer(conn);
  }

  /** A slice goes back once its socket is closed (no read can land in it any more). */
  giveWhenClosed(socket: Socket, slice: Buffer, then?: () => void): void {
    const done = (): void => {
      then?.();
      this.buffers.give(slice);
    };
    if (socket.closed) done();
    else socket.once('close', done);
  }
}

class PendingSocket implements PendingClient {
  readonly #path: SocketPath;
  readonly #client: RelaySocket;
  readonly #clientSlice: Buffer;
  #upstream: RelaySocket | undefined = undefined;
  #upstreamSlice: Buffer | undefined = undefined;

  constructor(path: SocketPath, client: RelaySocket, clientSlice: Buffer) {
    this.#path = path;
    this.#client = client;
    this.#clientSlice = clientSlice;
  }

  get gone(): boolean {
    return this.#client.destroyed;
  }

  async dial(target: HostPort, timeoutMs: number): Promise<DialResult> {
    const { buffers } = this.#path;
    const slice = buffers.take();
    const out = await connectUpstream({ host: target.host, port: target.port, timeoutMs, onread: { buffer: slice, callback: relayRead } });
    if (!out.ok) {
      buffers.give(slice); // never read into: the socket never connected
      return out;
    }
    this.#upstream = out.socket;
    this.#upstreamSlice = slice;
    return { ok: true, latencyMs: out.latencyMs };
  }

  join(upstreamKey: string, timing: RelayTiming): RelayedConnection {
    const opts = { ...timing, clientSlice: this.#clientSlice, upstreamSlice: this.#upstreamSlice! };
    return new ForwardedConnection(this.#client, this.#upstream!, upstreamKey, this.#path, opts);
  }

  /** An upstream socket that connected too late: its slice goes back once it is closed. */
  discardUpstream(): void {
    const upstream = this.#upstream!;
    upstream.destroy();
    this.#path.giveWhenClosed(upstream, this.#upstreamSlice!);
  }

  abandon(freed: () => void): void {
    this.#client.destroy();
    this.#path.giveWhenClosed(this.#client, this.#clientSlice, freed);
  }
}
