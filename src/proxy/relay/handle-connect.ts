// Dials one upstream on a bare TCP handle (the handle path's connect-upstream.ts): a name is
// resolved with dns.lookup as net.connect does, then a TCPConnectWrap carries the handshake
// (lib/net.js internalConnect/afterConnect, Node 24). Keep-alive and TCP_NODELAY are set once
// connected, as the socket path does. The outcome is a value, never a throw.
import { lookup } from 'node:dns';
import { isIP } from 'node:net';
import { getSystemErrorName } from 'node:util';
import { classifyProbeError, type ProbeReason } from '../../probe/probe-result.ts';
import { UPSTREAM_KEEPALIVE } from './forward-connection.ts';
import type { ConnectReq, RelayInternals, TcpHandle } from './handle-internals.ts';

export type HandleConnectOutcome = { ok: true; handle: TcpHandle; latencyMs: number } | { ok: false; reason: ProbeReason; detail: string; latencyMs: number };

interface AttemptReq extends ConnectReq {
  attempt: HandleConnectAttempt;
}

const KEEPALIVE_DELAY_S = Math.floor(UPSTREAM_KEEPALIVE.initialDelay / 1000);
const KEEPALIVE_INTERVAL_S = Math.floor(UPSTREAM_KEEPALIVE.interval / 1000);

function onConnected(this: AttemptReq, status: number): void {
  try {
    this.attempt.done(status);
  } catch (err) {
    this.attempt.fail(err);
  }
}

function onTimeout(attempt: HandleConnectAttempt): void {
  attempt.timedOut();
}

class HandleConnectAttempt {
  readonly #started = process.hrtime.bigint();
  readonly #resolve: (outcome: HandleConnectOutcome) => void;
  readonly #internals: RelayInternals;
  readonly #host: string;
  readonly #port: number;
  readonly #timeoutMs: number;
  #handle: TcpHandle | undefined = undefined;
  #timer: NodeJS.Timeout | undefined = undefined;
  #settled = false;

  constructor(internals: RelayInternals, host: string, port: number, timeoutMs: number, resolve: (outcome: HandleConnectOutcome) => void) {
    this.#internals = internals;
    this.#host = host;
    this.#port = port;
    this.#timeoutMs = timeoutMs;
    this.#resolve = resolve;
    if (timeoutMs > 0) this.#timer = setTimeout(onTimeout, timeoutMs, this);
  }

  #elapsed(): number {
    return Math.round(Number(process.hrtime.bigint() - this.#started) / 1e5) / 10;
  }

  start(): void {
    const family = isIP(this.#host);
    if (family !== 0) return this.#dial(this.#host, family);
    lookup(this.#host, (err, address, fam) => {
      if (this.#settled) return;
      try {
        if (err) this.fail(err);
        else this.#dial(address, fam);
      } catch (thrown) {
        this.fail(thrown); // a throw in a lookup callback would be uncaught
      }
    });
  }

  #dial(address: string, family: number): void {
    const handle = new this.#internals.TCP(this.#internals.socketType);
    this.#handle = handle;
    const req = new this.#internals.TCPConnectWrap() as AttemptReq;
    req.oncomplete = onConnected as unknown as ConnectReq['oncomplete'];
    req.attempt = this;
    const err = family === 6 ? handle.connect6(req, address, this.#port) : handle.connect(req, address, this.#port);
    if (err !== 0) this.done(err);
  }

  /** The handshake finished with this libuv status (0: connected). */
  done(status: number): void {
    if (this.#settled) return;
    if (status !== 0) return this.fail(errnoError(status, this.#host, this.#port));
    const handle = this.#handle!;
    this.#settle();
    // As the socket path: TCP_NODELAY and keep-alive applied once, on the connected socket.
    handle.setNoDelay(true);
    handle.setKeepAlive(true, KEEPALIVE_DELAY_S, KEEPALIVE_INTERVAL_S, UPSTREAM_KEEPALIVE.count);
    this.#resolve({ ok: true, handle, latencyMs: this.#elapsed() });
  }

  fail(err: unknown): void {
    if (this.#settled) return;
    this.#settle();
    this.#handle?.close();
    const detail = err instanceof Error ? err.message : String(err);
    this.#resolve({ ok: false, reason: classifyProbeError(err, false), detail, latencyMs: this.#elapsed() });
  }

  timedOut(): void {
    if (this.#settled) return;
    this.#settle();
    // Closing cancels the connect: its oncomplete comes with UV_ECANCELED and finds the attempt settled.
    this.#handle?.close();
    this.#resolve({ ok: false, reason: 'timeout', detail: `no TCP handshake within ${this.#timeoutMs} ms`, latencyMs: this.#elapsed() });
  }

  #settle(): void {
    this.#settled = true;
    clearTimeout(this.#timer);
  }
}

/** An errno exception as net's: `connect ECONNREFUSED 127.0.0.1:6443`, with code and errno. */
function errnoError(status: number, host: string, port: number): Error {
  let code: string;
  try {
    code = getSystemErrorName(status);
  } catch {
    code = `E${-status}`;
  }
  return Object.assign(new Error(`connect ${code} ${host}:${port}`), { code, errno: status, syscall: 'connect' });
}

/** Connects a new TCP handle to host:port within timeoutMs (0 or less: the OS default). */
export function connectHandle(internals: RelayInternals, host: string, port: number, timeoutMs: number): Promise<HandleConnectOutcome> {
  return new Promise((resolve) => {
    const attempt = new HandleConnectAttempt(internals, host, port, timeoutMs, resolve);
    try {
      attempt.start();
    } catch (err) {
      attempt.fail(err);
    }
  });
}
