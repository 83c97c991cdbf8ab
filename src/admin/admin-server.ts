// The admin listener every daemon mode serves: /metrics, /healthz, /readyz, /status, plus any
// routes a mode adds (the proxy's drain API). Plain node:http; nothing here is on a hot path.
// /status and the control routes need a loopback peer and the admin token (admin-token.ts); the
// connection budget keeps probes answerable under a local flood (admin-connections.ts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { listenOn } from '../handover/listen-on.ts';
import type { ListenerHandover } from '../handover/handover-session.ts';
import { AdminConnections } from './admin-connections.ts';
import { bearerMatches } from './admin-token.ts';
import type { Registry } from './metrics.ts';
import type { HostPort } from '../config/fields.ts';
import { infoAtAnyLevel, type Logger } from '../base/logger.ts';
import { describeError } from '../base/errors.ts';
import { redactSecrets } from '../base/redact.ts';

/**
 * Most admin connections open at once (the listener is for probes and people, not load). A newcomer
 * at the cap displaces the longest-idle connection; it is refused only when every one has a request
 * in flight.
 */
export const ADMIN_MAX_CONNECTIONS = 32;
/** A connection with no traffic for this long is closed. */
export const ADMIN_IDLE_TIMEOUT_MS = 10_000;
const CHECK_INTERVAL_MS = 1000;

export interface Readiness {
  ready: boolean;
  reason: string;
}

export interface AdminRoute {
  method: 'GET' | 'POST';
  /** Matched against the path; capture groups are passed to the handler. */
  path: RegExp;
  /** State-changing: only from loopback peers that send the admin token. */
  control?: boolean;
  handle: (match: RegExpExecArray, req: IncomingMessage) => Promise<{ status: number; body: unknown }>;
}

export interface AdminServerOptions {
  address: HostPort;
  registry: Registry;
  readiness: () => Readiness;
  status: () => unknown;
  /** Asked on every request, so a mode can hand its routes over after the listener started. */
  routes?: () => readonly AdminRoute[];
  /** Listen with SO_REUSEPORT, so a successor process (a static pod being replaced) can bind the same address. */
  reusePort?: boolean;
  /** --handover-socket: take the predecessor's listening socket for this address, offer ours to a successor. */
  handover?: ListenerHandover;
  /** The admin token (--admin-token-file); without one /status and control routes answer 401. */
  token?: string;
  /** Overrides ADMIN_IDLE_TIMEOUT_MS (tests). */
  idleTimeoutMs?: number;
  log: Logger;
}

export interface AdminServer {
  /** The bound address (port 0 resolved). */
  readonly address: HostPort;
  close(): Promise<void>;
}

export async function startAdminServer(opts: AdminServerOptions): Promise<AdminServer> {
  const idleMs = opts.idleTimeoutMs ?? ADMIN_IDLE_TIMEOUT_MS;
  const connections = new AdminConnections(ADMIN_MAX_CONNECTIONS);
  // connectionsCheckingInterval: how often headersTimeout and requestTimeout are enforced (30 s by
  // default). Not equal to the idle timeout: with Node 24, a socket timeout sharing its timer list
  // with a cleared interval of the same duration was seen never to fire.
  const server = createServer({ connectionsCheckingInterval: CHECK_INTERVAL_MS }, (req, res) => {
    const socket = req.socket;
    connections.requestStarted(socket);
    res.once('close', () => connections.requestEnded(socket));
    handle(opts, req, res).catch((err) => {
      opts.log.error({ err: describeError(err), path: req.url }, 'admin request failed');
      if (!res.headersSent) sendJson(res, 500, { error: describeError(err) });
      else res.destroy();
    });
  });
  // Limits: a local process must not be able to hold the daemon's descriptors or memory through
  // this listener, nor keep probes out. Connections are counted here, not with maxConnections (which
  // refuses newcomers, probes included). Idle keep-alive connections close after 5 s, silent ones
  // (no traffic at all) after the idle timeout; requestTimeout bounds a request that trickles in.
  server.on('connection', (socket: Socket) => connections.add(socket));
  server.keepAliveTimeout = Math.min(5000, idleMs);
  server.headersTimeout = Math.min(5000, idleMs);
  server.requestTimeout = Math.max(idleMs, server.headersTimeout + 1);
  server.timeout = idleMs;
  server.maxHeadersCount = 50;
  return openListener(server, opts.address, opts.reusePort === true, opts.log, 'admin listener ready', opts.handover);
}

/**
 * Binds an HTTP(S) server (the admin and the metrics listeners), logs its bound address, and
 * returns it with a close() that a second caller joins.
 */
export async function openListener(
  server: Server | HttpsServer,
  addr: HostPort,
  reusePort: boolean,
  log: Logger,
  ready: string,
  handover?: ListenerHandover,
): Promise<{ readonly address: HostPort; close(): Promise<void> }> {
  await listenOn(server, addr, { reusePort }, handover);
  const address = { host: addr.host, port: (server.address() as AddressInfo).port };
  // Written at any log level: a port given as 0 is known only from this line.
  infoAtAnyLevel(log, { address: `${address.host}:${address.port}` }, ready);
  let closing: Promise<void> | undefined;
  return {
    address,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

async function handle(opts: AdminServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://admin').pathname;
  for (const route of opts.routes?.() ?? []) {
    const m = route.path.exec(path);
    if (!m || route.method !== req.method) continue;
    if (route.control) {
      const refused = controlRefusal(opts, req);
      if (refused) return sendJson(res, refused.status, { error: refused.error }, refused.headers);
    }
    const { status, body } = await route.handle(m, req);
    return sendJson(res, status, body);
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: `${req.method} not allowed on ${path}` });
  switch (path) {
    case '/metrics': {
      const text = await opts.registry.metrics();
      res.writeHead(200, { 'content-type': opts.registry.contentType });
      res.end(text);
      return;
    }
    case '/healthz':
      return sendText(res, 200, 'ok\n');
    case '/readyz': {
      const r = opts.readiness();
      return sendText(res, r.ready ? 200 : 503, `${r.ready ? 'ready' : 'not ready'}: ${r.reason}\n`);
    }
    case '/status': {
      // /status tells more than a probe needs (addresses, errors): loopback peers with the token only,
      // so a listener bound to the pod network for probes does not publish it there.
      const refused = controlRefusal(opts, req);
      if (refused) return sendJson(res, refused.status, { error: refused.error }, refused.headers);
      return sendJson(res, 200, redactSecrets(opts.status()));
    }
    default:
      return sendJson(res, 404, { error: `no such endpoint ${path}; try /metrics, /healthz, /readyz or /status` });
  }
}

/** Why a request for /status or a control route is refused, or undefined when it may proceed. */
function controlRefusal(opts: AdminServerOptions, req: IncomingMessage): { status: number; error: string; headers?: Record<string, string> } | undefined {
  if (!isLoopback(req.socket.remoteAddress)) return { status: 403, error: 'this endpoint is served to loopback peers only (kubectl port-forward works)' };
  if (opts.token === undefined)
    return {
      status: 401,
      error: 'this endpoint needs the admin token: start the daemon with --admin-token-file FILE and send "Authorization: Bearer $(cat FILE)"',
    };
  if (!bearerMatches(req.headers.authorization, opts.token))
    return {
      status: 401,
      error: 'missing or wrong admin token: send "Authorization: Bearer $(cat FILE)" with the --admin-token-file FILE',
      headers: { 'www-authenticate': 'Bearer' },
    };
  return undefined;
}

function isLoopback(addr: string | undefined): boolean {
  return addr !== undefined && (addr === '::1' || addr.startsWith('127.') || addr.startsWith('::ffff:127.'));
}

function sendText(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'content-type': 'application/json' });
  res.end(JSON.stringify(body, null, 2) + '\n');
}
