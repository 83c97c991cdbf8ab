// The libuv stream internals the handle relay (handle-relay.ts) uses, found and checked once at
// start. They are what lib/net.js itself is built on (Node 24: lib/net.js, lib/internal/
// stream_base_commons.js), reached through process.binding('tcp_wrap' | 'stream_wrap'), both on
// Node's process.binding allow-list. Nothing here is public API, so every piece is checked before
// the proxy relies on it; when one is missing or answers unexpectedly the proxy keeps net.Socket
// on both legs (the socket path) and says why.

import { getSystemErrorName } from 'node:util';

/** A libuv TCP handle (tcp_wrap's TCP) as far as the relay touches it. */
export interface TcpHandle {
  /** Called (with the handle as `this`) after each read; the byte count or error is in the state array. */
  onread: (this: TcpHandle) => void;
  useUserBuffer(buffer: Uint8Array): void;
  readStart(): number;
  readStop(): number;
  writeBuffer(req: WriteReq, data: Uint8Array): number;
  shutdown(req: ShutdownReq): number;
  connect(req: ConnectReq, address: string, port: number): number;
  connect6(req: ConnectReq, address: string, port: number): number;
  setNoDelay(on: boolean): number;
  setKeepAlive(on: boolean, delaySeconds: number, intervalSeconds?: number, count?: number): number;
  close(callback?: (this: TcpHandle) => void): void;
  readonly writeQueueSize: number;
  /** The socket's file descriptor (-1 before one exists); the native path takes it over (native-relay.ts). */
  readonly fd?: number;
}

/** stream_wrap's WriteWrap: oncomplete(status) runs with the request as `this`, for writes that went async only. */
export interface WriteReq {
  handle: TcpHandle;
  oncomplete: (this: WriteReq, status: number) => void;
}

/** stream_wrap's ShutdownWrap: oncomplete(status) once the FIN is sent (after queued writes). */
export interface ShutdownReq {
  handle: TcpHandle;
  oncomplete: (this: ShutdownReq, status: number) => void;
}

/** tcp_wrap's TCPConnectWrap: oncomplete(status, handle) once the handshake is done or failed. */
export interface ConnectReq {
  oncomplete: (this: ConnectReq, status: number, handle: TcpHandle) => void;
}

/** libuv's UV_EOF (the same on every platform): the read byte count that means the peer sent FIN. */
export const UV_EOF = -4095;

export interface RelayInternals {
  TCP: new (type: number) => TcpHandle;
  /** tcp_wrap's constants.SOCKET: a handle for a connection (not a listener). */
  socketType: number;
  TCPConnectWrap: new () => ConnectReq;
  WriteWrap: new () => WriteReq;
  ShutdownWrap: new () => ShutdownReq;
  /** streamBaseState: where the C++ side leaves the last read's byte count (or error) and whether the last write went async. */
  state: Int32Array;
  kReadBytesOrError: number;
  kLastWriteWasAsync: number;
  /**
   * The WriteWrap the relay passes to writeBuffer while writes complete at once (handle-relay.ts).
   * Node's C++ side binds a WriteWrap only to a write that goes async (StreamBase::Write in
   * src/stream_base.cc returns before CreateWriteWrap when uv_try_write took every byte), so one
   * object serves every such write; one that went async stays with its write and is replaced.
   */
  spareWrite: WriteReq;
}

const HANDLE_METHODS = [
  'useUserBuffer',
  'readStart',
  'readStop',
  'writeBuffer',
  'shutdown',
  'connect',
  'connect6',
  'setNoDelay',
  'setKeepAlive',
  'close',
] as const;

type Binding = (name: string) => Record<string, unknown>;

/**
 * The internals, or why they cannot be used. `binding` is process.binding (injected by tests).
 * Checks presence and shape, and that a fresh handle takes an `onread` function and reports an
 * empty write queue; the handle is closed again.
 */
export function loadRelayInternals(binding: Binding | null = bindingOf(process)): RelayInternals | { unusable: string } {
  try {
    if (typeof binding !== 'function') return { unusable: 'process.binding is not available' };
    const tcp = binding('tcp_wrap');
    const stream = binding('stream_wrap');
    const TCP = tcp.TCP as RelayInternals['TCP'] | undefined;
    const socketType = (tcp.constants as { SOCKET?: unknown } | undefined)?.SOCKET;
    const { TCPConnectWrap } = tcp;
    const { WriteWrap, ShutdownWrap, streamBaseState: state, kReadBytesOrError, kLastWriteWasAsync } = stream;
    for (const [name, value] of Object.entries({ TCP, TCPConnectWrap, WriteWrap, ShutdownWrap })) {
      if (typeof value !== 'function') return { unusable: `${name} is missing from process.binding` };
    }
    if (typeof socketType !== 'number') return { unusable: "tcp_wrap's constants.SOCKET is missing" };
    if (!(state instanceof Int32Array)) return { unusable: "stream_wrap's streamBaseState is not an Int32Array" };
    if (typeof kReadBytesOrError !== 'number' || typeof kLastWriteWasAsync !== 'number') return { unusable: "stream_wrap's state indexes are missing" };
    if (getSystemErrorName(UV_EOF) !== 'EOF') return { unusable: `libuv's EOF is not ${UV_EOF}` };
    if (kReadBytesOrError >= state.length || kLastWriteWasAsync >= state.length) return { unusable: "stream_wrap's state indexes are out of range" };
    for (const m of HANDLE_METHODS) {
      if (typeof (TCP!.prototype as Record<string, unknown>)[m] !== 'function') return { unusable: `TCP handles have no ${m}()` };
    }
    const probe = new TCP!(socketType);
    try {
      const onread = function (): void {};
      probe.onread = onread;
      if (probe.onread !== onread) return { unusable: 'a TCP handle does not keep its onread function' };
      if (probe.writeQueueSize !== 0) return { unusable: 'a fresh TCP handle reports a non-empty write queue' };
    } finally {
      probe.close();
    }
    return {
      TCP: TCP!,
      socketType,
      TCPConnectWrap: TCPConnectWrap as RelayInternals['TCPConnectWrap'],
      WriteWrap: WriteWrap as RelayInternals['WriteWrap'],
      ShutdownWrap: ShutdownWrap as RelayInternals['ShutdownWrap'],
      state,
      kReadBytesOrError,
      kLastWriteWasAsync,
      spareWrite: new (WriteWrap as RelayInternals['WriteWrap'])(),
    };
  } catch (err) {
    return { unusable: `checking the stream internals threw: ${err instanceof Error ? err.message : String(err)}` };
  }
}

function bindingOf(p: NodeJS.Process): Binding | null {
  const b = (p as unknown as { binding?: Binding }).binding;
  return typeof b === 'function' ? b.bind(p) : null;
}
