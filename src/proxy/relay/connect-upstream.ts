// Dials one upstream for one client connection, with a hard connect timeout. The outcome is a
// value: a connected socket with its handshake latency, or the reason it failed.
//
// The socket's 'connect' and 'error' listeners are functions of this module and stay for the
// socket's life (relayError is also the forwarder's error listener): no closure per attempt and no
// listener added and removed per connection (CPU per new connection; a heap snapshot showed no
// difference in what an established connection keeps).
import type { OnReadOpts } from 'node:net';
import { classifyProbeError, type ProbeReason } from '../../probe/probe-result.ts';
import { relayError, RelaySocket, UPSTREAM_KEEPALIVE, type PendingConnect } from './forward-connection.ts';

export type ConnectOutcome = { ok: true; socket: RelaySocket; latencyMs: number } | { ok: false; reason: ProbeReason; detail: string; latencyMs: number };

export interface ConnectOptions {
  host: string;
  port: number;
  /** Longest wait for the TCP handshake; 0 or less means the OS default (minutes: avoid). */
  timeoutMs: number;
  /** Read into this buffer and hand each chunk to this callback (see relayRead); the socket starts paused. */
  onread?: OnReadOpts;
}

/** One attempt in flight; settled once, by connect, error or timeout. */
export class ConnectAttempt implements PendingConnect {
  // hrtime, not performance.now(): the latter loads Node's performance timeline at rest (docs/footprint.md).
  readonly #started = process.hrtime.bigint();
  readonly #resolve: (outcome: ConnectOutcome) => void;
  readonly #timeoutMs: number;
  timer: NodeJS.Timeout | undefined = undefined;

  constructor(resolve: (outcome: ConnectOutcome) => void, timeoutMs: number) {
    this.#resolve = resolve;
    this.#timeoutMs = timeoutMs;
  }

  #elapsed(): number {
    return Math.round(Number(process.hrtime.bigint() - this.#started) / 1e5) / 10;
  }

  connected(socket: RelaySocket): void {
    clearTimeout(this.timer);
    socket.attempt = undefined;
    // Keep-alive once connected: set before, libuv applies it twice, with its defaults when the
    // socket is created and again with ours after the connect (strace: 9 setsockopt calls per
    // upstream connection instead of 5).
    socket.setKeepAlive(UPSTREAM_KEEPALIVE);
    this.#resolve({ ok: true, socket, latencyMs: this.#elapsed() });
  }

  failed(socket: RelaySocket, err: Error): void {
    clearTimeout(this.timer);
    socket.attempt = undefined;
    socket.destroy();
    this.#resolve({ ok: false, reason: classifyProbeError(err, false), detail: err.message, latencyMs: this.#elapsed() });
  }

  timedOut(socket: RelaySocket): void {
    socket.attempt = undefined;
    socket.destroy();
    this.#resolve({ ok: false, reason: 'timeout', detail: `no TCP handshake within ${this.#timeoutMs} ms`, latencyMs: this.#elapsed() });
  }
}

function onConnect(this: RelaySocket): void {
  this.attempt?.connected(this);
}

function onTimeout(socket: RelaySocket): void {
  socket.attempt?.timedOut(socket);
}

export function connectUpstream(opts: ConnectOptions): Promise<ConnectOutcome> {
  return new Promise((resolve) => {
    // allowHalfOpen: the forwarder passes each FIN on itself instead of Node ending the other way.
    // noDelay as an option: Node sets it once, on the connected socket.
    const socket = new RelaySocket({ allowHalfOpen: true, noDelay: true, onread: opts.onread });
    const attempt = new ConnectAttempt(resolve, opts.timeoutMs);
    socket.attempt = attempt;
    socket.on('error', relayError);
    socket.on('connect', onConnect);
    // (net.connect is new Socket(options).connect(options).) Paused, so no byte is read before the
    // forwarder is wired.
    socket.connect({ host: opts.host, port: opts.port });
    socket.pause();
    if (opts.timeoutMs > 0) attempt.timer = setTimeout(onTimeout, opts.timeoutMs, socket);
  });
}
