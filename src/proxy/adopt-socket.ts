// Re-wraps a freshly accepted socket so that it reads into a buffer of ours: net.Server has no
// `onread` option (only net.connect and new Socket have), so the accepted handle is moved into a
// new Socket that has one. Must run before the socket has read anything (pauseOnConnect).
import type { OnReadOpts, Socket } from 'node:net';
import { RelaySocket } from './forward-connection.ts';

interface WithHandle {
  _handle: unknown;
}

/**
 * Returns a paused, half-open-capable socket on the same connection, reading through `onread`.
 * The accepted wrapper is left without its handle and destroyed, which only settles the server's
 * connection count (server.close() would otherwise wait for it); the connection itself stays open.
 */
export function adoptAccepted(accepted: Socket, onread: OnReadOpts): RelaySocket {
  const holder = accepted as unknown as WithHandle;
  const handle = holder._handle;
  if (!handle) throw new Error('adoptAccepted: the accepted socket has no handle (already closed)');
  holder._handle = null;
  // handle and pauseOnCreate are what net.Server passes for an accepted socket (lib/net.js onconnection).
  const opts = { handle, allowHalfOpen: true, pauseOnCreate: true, readable: true, writable: true, onread };
  const socket = new RelaySocket(opts as unknown as ConstructorParameters<typeof RelaySocket>[0]);
  accepted.destroy();
  return socket;
}
