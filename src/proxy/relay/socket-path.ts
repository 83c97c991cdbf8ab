// --relay socket: net.Socket on both legs (forward-connection.ts moves the bytes, connect-upstream.ts
// dials). Each leg reads into a slice of the read buffer pool, given back once no write can refer to
// it any more: when the leg is closed.
import type { Socket } from 'node:net';
import type { HostPort } from '../../config/fields.ts';
import { socketOnHandle, type AcceptedHandle } from '../adopt-socket.ts';
import { connectUpstream } from './connect-upstream.ts';
import { ForwardedConnection, relayError, relayRead, type RelaySocket } from './forward-connection.ts';
import type { PendingClient, Relay, RelayPath } from './relay.ts';
import type { RelayedConnection, RelayTiming } from './relayed-connection.ts';
import { PendingLegs, SlicedPath, type LegOutcome } from './sliced-path.ts';

/** The socket path of one frontend, and the owner of its connections. */
export class SocketPath extends SlicedPath implements Relay {
  readonly path: RelayPath = 'socket';

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
}

class PendingSocket extends PendingLegs<RelaySocket, SocketPath> {
  get gone(): boolean {
    return this.client.destroyed;
  }

  protected async connect(target: HostPort, timeoutMs: number, slice: Buffer): Promise<LegOutcome<RelaySocket>> {
    const out = await connectUpstream({ host: target.host, port: target.port, timeoutMs, onread: { buffer: slice, callback: relayRead } });
    return out.ok ? { ok: true, leg: out.socket, latencyMs: out.latencyMs } : out;
  }

  join(upstreamKey: string, timing: RelayTiming): RelayedConnection {
    const opts = { ...timing, clientSlice: this.clientSlice, upstreamSlice: this.upstreamSlice! };
    return new ForwardedConnection(this.client, this.upstream!, upstreamKey, this.path, opts);
  }

  /** An upstream socket that connected too late: its slice goes back once it is closed. */
  discardUpstream(): void {
    this.upstream!.destroy();
    this.#giveWhenClosed(this.upstream!, this.upstreamSlice!);
  }

  abandon(freed: () => void): void {
    this.client.destroy();
    this.#giveWhenClosed(this.client, this.clientSlice, freed);
  }

  /** A slice goes back once its socket is closed (no read can land in it any more). */
  #giveWhenClosed(socket: Socket, slice: Buffer, then?: () => void): void {
    const done = (): void => {
      then?.();
      this.buffers.give(slice);
    };
    if (socket.closed) done();
    else socket.once('close', done);
  }
}
