// Accepted connections as bare handles, wrapped once in a socket that reads into a buffer of ours.
// net.Server has no `onread` option (only net.connect and new Socket have), and it wraps every
// accepted handle in a Socket of its own; the proxy needs one with `onread`. Two ways:
// - takeAccepts: the listening handle's `onconnection` (what net.Server itself installs, lib/net.js)
//   is replaced by one that hands the handle on: no Socket is built and thrown away per connection.
//   The server's noDelay and keep-alive are set once on the listening socket where accepted ones
//   inherit them (Linux), else on each handle as Node's onconnection does.
// - detachHandle, the fallback when the server has no such handle: the handle is moved out of the
//   Socket net.Server built, which is then destroyed.
// Either way the server does not count the connection, so server.close() does not wait for it; the
// proxy's ConnectionSet decides about established connections.
import type { OnReadOpts, Server, Socket } from 'node:net';
import { getSystemErrorName } from 'node:util';
import { RelaySocket } from './relay/forward-connection.ts';

/** libuv's TCP handle (tcp_wrap's TCP) as far as the proxy touches it. */
export interface AcceptedHandle {
  close(): void;
  setNoDelay?(on: boolean): number;
  setKeepAlive?(on: boolean, delaySeconds: number): number;
}

interface ListenHandle {
  onconnection?: (err: number, handle: AcceptedHandle | undefined) => void;
  setNoDelay?(on: boolean): number;
  setKeepAlive?(on: boolean, delaySeconds: number): number;
}

/**
 * Sets noDelay and keep-alive on the listening socket itself, where Linux's accepted sockets inherit
 * them (TCP_NODELAY, SO_KEEPALIVE, TCP_KEEPIDLE/KEEPINTVL/KEEPCNT are copied at accept): five
 * setsockopt calls per accepted connection fewer. True when every option is set there; elsewhere,
 * or when a call fails, false and they are set per connection as net.Server does.
 */
export function setOnListener(listening: ListenHandle, opts: AcceptOptions, platform = process.platform): boolean {
  if (platform !== 'linux' || typeof listening.setNoDelay !== 'function' || typeof listening.setKeepAlive !== 'function') return false;
  if (opts.noDelay && listening.setNoDelay(true) !== 0) return false;
  if (opts.keepAliveSeconds !== undefined && listening.setKeepAlive(true, opts.keepAliveSeconds) !== 0) return false;
  return true;
}

/** What the listener was created with (lib/net.js keeps them on the server under these names). */
export interface AcceptOptions {
  noDelay: boolean;
  /** Keep-alive's initial delay in seconds; undefined: no keep-alive. */
  keepAliveSeconds: number | undefined;
}

/**
 * Makes the listening server hand each accepted connection to onHandle as a bare handle. False when
 * the server has no listening handle with `onconnection` (then use its 'connection' event and
 * detachHandle). Call once the server listens.
 */
export function takeAccepts(server: Server, opts: AcceptOptions, onHandle: (handle: AcceptedHandle) => void): boolean {
  const listening = (server as unknown as { _handle?: ListenHandle | null })._handle;
  if (!listening || typeof listening.onconnection !== 'function') return false;
  const inherited = setOnListener(listening, opts);
  const noDelay = opts.noDelay && !inherited;
  const keepAliveSeconds = inherited ? undefined : opts.keepAliveSeconds;
  listening.onconnection = (err, handle) => {
    if (err || !handle) {
      // As net.Server does: an accept error (EMFILE, ENFILE, ...) is the server's 'error'.
      const code = err ? getSystemErrorName(err) : 'EINVAL';
      server.emit('error', Object.assign(new Error(`accept ${code}`), { code, errno: err, syscall: 'accept' }));
      return;
    }
    if (noDelay) handle.setNoDelay?.(true);
    if (keepAliveSeconds !== undefined) handle.setKeepAlive?.(true, keepAliveSeconds);
    onHandle(handle);
  };
  return true;
}

/** The handle of a socket net.Server built, taken out of it; the socket is destroyed (it has nothing left to close). */
export function detachHandle(accepted: Socket): AcceptedHandle | undefined {
  const holder = accepted as unknown as { _handle: AcceptedHandle | null };
  const handle = holder._handle ?? undefined;
  holder._handle = null;
  accepted.destroy();
  return handle;
}

/**
 * A paused, half-open-capable socket on an accepted handle, reading through `onread`. Must be
 * called before anything read from the handle (net.Server's pauseOnConnect, or takeAccepts).
 */
export function socketOnHandle(handle: AcceptedHandle, onread: OnReadOpts): RelaySocket {
  // handle and pauseOnCreate are what net.Server passes for an accepted socket (lib/net.js onconnection).
  const opts = { handle, allowHalfOpen: true, pauseOnCreate: true, readable: true, writable: true, onread };
  return new RelaySocket(opts as unknown as ConstructorParameters<typeof RelaySocket>[0]);
}
