// Dials one upstream for one client connection, with a hard connect timeout. The outcome is a
// value: a connected socket with its handshake latency, or the reason it failed.
import { connect, type OnReadOpts, type Socket } from 'node:net';
import { classifyProbeError, stopwatch, type ProbeReason } from '../probe/probe-result.ts';
import { UPSTREAM_KEEPALIVE } from './forward-connection.ts';

export type ConnectOutcome =
  | { ok: true; socket: Socket; latencyMs: number }
  | { ok: false; reason: ProbeReason; detail: string; latencyMs: number };

export interface ConnectOptions {
  host: string;
  port: number;
  /** Longest wait for the TCP handshake; 0 or less means the OS default (minutes: avoid). */
  timeoutMs: number;
  /** Read into this buffer and hand each chunk to this callback (see Relay); the socket starts paused. */
  onread?: OnReadOpts;
}

export function connectUpstream(opts: ConnectOptions): Promise<ConnectOutcome> {
  const elapsed = stopwatch();
  return new Promise((resolve) => {
    // allowHalfOpen: the forwarder passes each FIN on itself instead of Node ending the other way.
    // noDelay as an option: Node sets it once, on the connected socket. Paused, so no byte is read
    // before the forwarder is wired.
    const socket = connect({ host: opts.host, port: opts.port, allowHalfOpen: true, noDelay: true, onread: opts.onread });
    socket.pause();
    let timer: NodeJS.Timeout | undefined;
    const onError = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ ok: false, reason: classifyProbeError(err, false), detail: err.message, latencyMs: elapsed() });
    };
    socket.once('error', onError);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      // Keep-alive once connected: set before, libuv applies it twice, with its defaults when the
      // socket is created and again with ours after the connect (strace: 9 setsockopt calls per
      // upstream connection instead of 5).
      socket.setKeepAlive(UPSTREAM_KEEPALIVE);
      resolve({ ok: true, socket, latencyMs: elapsed() });
    });
    if (opts.timeoutMs > 0) {
      timer = setTimeout(() => {
        socket.off('error', onError);
        socket.destroy();
        resolve({ ok: false, reason: 'timeout', detail: `no TCP handshake within ${opts.timeoutMs} ms`, latencyMs: elapsed() });
      }, opts.timeoutMs);
    }
  });
}
