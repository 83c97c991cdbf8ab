// Moves bytes between a client and an upstream on the two bare libuv TCP handles, without a
// net.Socket on either leg: per connection two handles and one HandleConnection (a Socket with its
// ReadableState, WritableState and listeners is ~1.2 KB of heap a leg; docs/design/relay-paths.md).
// Behaviour is the socket path's (forward-connection.ts): each leg reads into its own slice, a
// chunk is written on as it is, the source stops reading while the other leg's write is queued
// (backpressure), a FIN is passed on as a shutdown once queued writes are out and the other
// direction keeps flowing, any error or reset closes both legs.
//
// The calls follow lib/net.js and lib/internal/stream_base_commons.js of Node 24 (onStreamRead,
// writeGeneric/afterWriteDispatched, Socket.prototype._final, closeSocketHandle): the read count is
// in streamBaseState[kReadBytesOrError]; a write's WriteWrap gets oncomplete only when
// streamBaseState[kLastWriteWasAsync] says it went async; shutdown() returning 1 or UV_ENOTCONN
// finished at once. Every callback from the handles catches what it throws: a throw there is an
// uncaught exception, and no peer may crash the daemon.
import { constants as osConstants } from 'node:os';
import { noteFirstBytes } from './first-byte-watch.ts';
import { SharedConnectionState, type RelayOwner, type SlicedRelayOptions } from './relayed-connection.ts';
import { UV_EOF, type RelayInternals, type ShutdownReq, type TcpHandle, type WriteReq } from './handle-internals.ts';

/** A TCP handle of the data path: knows the connection it is a leg of. */
export interface RelayHandle extends TcpHandle {
  conn?: HandleConnection | undefined;
}

const UV_ENOTCONN = -osConstants.errno.ENOTCONN;

// Per-leg state bits.
const READ_EOF = 1; // the leg's peer sent FIN
const WRITE_DONE = 2; // our FIN to the leg is out (or the write side failed)
const CLOSED = 4; // close() called on the handle

/** A view no read matches (a read of 0 bytes is never written on). */
const NO_VIEW = new Uint8Array(0);

/** The handles' onread (`this` is the handle that read); the byte count or error is in the state array. */
function onRelayRead(this: RelayHandle): void {
  const conn = this.conn;
  if (conn === undefined) return;
  try {
    conn.read(this);
  } catch {
    conn.destroy();
  }
}

function onWriteDone(this: WriteReq, status: number): void {
  const conn = (this.handle as RelayHandle).conn;
  if (conn === undefined) return;
  try {
    conn.written(this.handle, status);
  } catch {
    conn.destroy();
  }
}

function onShutdownDone(this: ShutdownReq, status: number): void {
  const conn = (this.handle as RelayHandle).conn;
  if (conn === undefined) return;
  try {
    // As Socket.prototype._final's afterShutdown: the status is not an error of the connection.
    void status;
    conn.shutDown(this.handle);
  } catch {
    conn.destroy();
  }
}

function onLegClosed(this: RelayHandle): void {
  const conn = this.conn;
  if (conn === undefined) return;
  try {
    conn.legClosed();
  } catch {
    // The owner's bookkeeping threw: nothing is left open to close, and the daemon goes on.
  }
}

export class HandleConnection extends SharedConnectionState {
  readonly client: RelayHandle;
  readonly upstream: RelayHandle;
  declare readonly clientSlice: Buffer;
  declare readonly upstreamSlice: Buffer;
  active = true;
  bytesToUpstream = 0;
  bytesToClient = 0;
  #clientState = 0;
  #upstreamState = 0;
  /** The last views written on (see #viewOf); empty until the first read of each direction. */
  #toUpstreamView: Uint8Array = NO_VIEW;
  #toClientView: Uint8Array = NO_VIEW;
  #open = 2;
  readonly #internals: RelayInternals;

  /** Takes ownership of both handles (connected, not reading yet) and starts relaying on the two read slices. */
  constructor(internals: RelayInternals, client: TcpHandle, upstream: TcpHandle, upstreamKey: string, owner: RelayOwner, opts: SlicedRelayOptions) {
    super(upstreamKey, owner, opts);
    this.#internals = internals;
    this.client = client;
    this.upstream = upstream;
    this.client.conn = this;
    this.upstream.conn = this;
    this.#startReading(this.client, opts.clientSlice);
    this.#startReading(this.upstream, opts.upstreamSlice);
  }

  #startReading(leg: RelayHandle, slice: Buffer): void {
    if (this.#stateOf(leg) & CLOSED) return;
    leg.useUserBuffer(slice);
    leg.onread = onRelayRead;
    const err = leg.readStart();
    if (err !== 0) this.destroy();
  }

  /**
   * The first `nread` bytes of a direction's slice as a plain Uint8Array (writeBuffer takes any;
   * Buffer#subarray would run Buffer's species constructor). The last view of each direction is
   * kept and used again for a read of the same length (a client repeating a request, fixed-size TLS
   * records of a bulk transfer): a view costs an allocation and a call into V8's runtime, about 7%
   * of a keep-alive request's instructions. The slab behind it lives as long as the pool.
   */
  #viewOf(fromClient: boolean, nread: number): Uint8Array {
    if (fromClient) {
      if (this.#toUpstreamView.length === nread) return this.#toUpstreamView;
      const s = this.clientSlice;
      return (this.#toUpstreamView = new Uint8Array(s.buffer, s.byteOffset, nread));
    }
    if (this.#toClientView.length === nread) return this.#toClientView;
    const s = this.upstreamSlice;
    return (this.#toClientView = new Uint8Array(s.buffer, s.byteOffset, nread));
  }

  #stateOf(leg: TcpHandle): number {
    return leg === this.client ? this.#clientState : this.#upstreamState;
  }

  #setState(leg: TcpHandle, bits: number): number {
    if (leg === this.client) return (this.#clientState |= bits);
    return (this.#upstreamState |= bits);
  }

  get ended(): boolean {
    return (this.#clientState & this.#upstreamState & CLOSED) !== 0;
  }

  /** @internal A read on `from` finished: pass the bytes on, or the FIN, or close both on an error. */
  read(from: RelayHandle): void {
    const { state, kReadBytesOrError } = this.#internals;
    const nread = state[kReadBytesOrError]!;
    if (nread === 0) return;
    const fromClient = from === this.client;
    const to = fromClient ? this.upstream : this.client;
    if (nread === UV_EOF) {
      // libuv stops reading a stream at EOF by itself. The leg closes once our FIN to it is out too.
      if (this.#setState(from, READ_EOF) & WRITE_DONE) this.#close(from);
      this.#shutdown(to);
      return;
    }
    if (nread < 0) {
      this.destroy();
      return;
    }
    this.active = true;
    if (fromClient) this.bytesToUpstream += nread;
    else this.bytesToClient += nread;
    if (this.watchingFirstByte) noteFirstBytes(this, fromClient);
    if (this.#stateOf(to) & (WRITE_DONE | CLOSED)) {
      // The other leg cannot take bytes any more (its write side failed): nothing can be relayed.
      this.destroy();
      return;
    }
    const internals = this.#internals;
    const req = internals.spareWrite;
    const err = to.writeBuffer(req, this.#viewOf(fromClient, nread));
    if (err !== 0) {
      internals.spareWrite = new internals.WriteWrap(); // a failed write may have marked the object (its error)
      this.destroy();
      return;
    }
    if (internals.state[internals.kLastWriteWasAsync] === 0) return;
    // Queued, not written: the request is now the write's own (its oncomplete runs from the loop,
    // never from inside writeBuffer), and the queue points into the source's slice, so the source is
    // not read into until the write is out (onWriteDone), as relayRead does on the socket path.
    req.handle = to;
    req.oncomplete = onWriteDone;
    internals.spareWrite = new internals.WriteWrap();
    if (from.readStop() !== 0) this.destroy();
  }

  /** @internal A queued write to `to` finished: read its source again, unless that direction is over. */
  written(to: TcpHandle, status: number): void {
    if (status < 0) {
      this.destroy();
      return;
    }
    if (to.writeQueueSize !== 0) return;
    const from = to === this.client ? this.upstream : this.client;
    if (this.#stateOf(from) & (READ_EOF | CLOSED)) return;
    if (from.readStart() !== 0) this.destroy();
  }

  #shutdown(to: TcpHandle): void {
    if (this.#stateOf(to) & (WRITE_DONE | CLOSED)) return;
    const req = new this.#internals.ShutdownWrap();
    req.handle = to;
    req.oncomplete = onShutdownDone;
    const err = to.shutdown(req);
    if (err === 1 || err === UV_ENOTCONN) this.shutDown(to);
    else if (err !== 0) this.destroy();
  }

  /** @internal Our FIN to `leg` is out: the leg closes once its peer's FIN has come too (allowHalfOpen). */
  shutDown(leg: TcpHandle): void {
    const s = this.#setState(leg, WRITE_DONE);
    if (s & READ_EOF) this.#close(leg);
  }

  get upstreamClosed(): boolean {
    return (this.#upstreamState & CLOSED) !== 0;
  }

  #close(leg: TcpHandle): void {
    if (this.#stateOf(leg) & CLOSED) return;
    this.#setState(leg, CLOSED);
    leg.close(onLegClosed);
  }

  /** @internal One handle's close callback. */
  legClosed(): void {
    if (--this.#open !== 0) return;
    this.client.conn = undefined;
    this.upstream.conn = undefined;
    this.closed();
  }

  /** Abortive close of both legs; idempotent. Queued writes are cancelled (their callbacks find the connection closing). */
  destroy(): void {
    this.#close(this.client);
    this.#close(this.upstream);
  }
}
