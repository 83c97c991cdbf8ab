// The admin listener every daemon mode serves: /metrics, /healthz, /readyz, /status, plus any
// routes a mode adds (the proxy's drain API). Plain node:http; nothing here is on a hot path.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from './metrics.ts';
import type { HostPort } from '../config/fields.ts';
import type { Logger } from '../base/logger.ts';
import { describeError } from '../base/errors.ts';
import { redactSecrets } from '../base/redact.ts';

/** Most admin connections open at once; more are closed at accept (the listener is for probes and people, not load). */
export const ADMIN_MAX_CONNECTIONS = 32;
/** A connection with no request in flight for this long is closed. */
export const ADMIN_IDLE_TIMEOUT_MS = 10_000;

export interface Readiness {
  ready: boolean;
  reason: string;
}

export interface AdminRoute {
  method: 'GET' | 'POST';
  /** Matched against the path; capture groups are passed to the handler. */
  path: RegExp;
  /** Only from loopback peers (state-changing routes). */
  loopbackOnly?: boolean;
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
  log: Logger;
}

export interface AdminServer {
  /** The bound address (port 0 resolved). */
  readonly address: HostPort;
  close(): Promise<void>;
}

export async function startAdminServer(opts: AdminServerOptions): Promise<AdminServer> {
  const server = createServer((req, res) => {
    handle(opts, req, res).catch((err) => {
      opts.log.error({ err: describeError(err), path: req.url }, 'admin request failed');
      if (!res.headersSent) sendJson(res, 500, { error: describeError(err) });
      else res.destroy();
    });
  });
  // Limits: a local process must not be able to hold the daemon's descriptors or memory through
  // this listener. Idle keep-alive connections close after 5 s, silent ones (no request or a
  // request that never completes) after ADMIN_IDLE_TIMEOUT_MS.
  server.maxConnections = ADMIN_MAX_CONNECTIONS;
  server.keepAliveTimeout = 5000;
  server.headersTimeout = 5000;
  server.requestTimeout = ADMIN_IDLE_TIMEOUT_MS;
  server.timeout = ADMIN_IDLE_TIMEOUT_MS;
  server.maxHeadersCount = 50;
  await listen(server, opts.address, opts.reusePort === true);
  const bound = server.address() as AddressInfo;
  const address = { host: opts.address.host, port: bound.port };
  opts.log.info({ address: `${address.host}:${address.port}` }, 'admin listener ready');
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

function listen(server: Server, addr: HostPort, reusePort: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: addr.port, host: addr.host, reusePort }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

async function handle(opts: AdminServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://admin').pathname;
  for (const route of opts.routes?.() ?? []) {
    const m = route.path.exec(path);
    if (!m || route.method !== req.method) continue;
    if (route.loopbackOnly && !isLoopback(req.socket.remoteAddress)) {
      return sendJson(res, 403, { error: 'this endpoint accepts requests from loopback only' });
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
    case '/status':
      // /status tells more than a probe needs (addresses, errors): loopback peers only, so a
      // listener bound to the pod network for probes does not publish it there.
      if (!isLoopback(req.socket.remoteAddress)) return sendJson(res, 403, { error: '/status is served to loopback peers only (kubectl port-forward works)' });
      return sendJson(res, 200, redactSecrets(opts.status()));
    default:
      return sendJson(res, 404, { error: `no such endpoint ${path}; try /metrics, /healthz, /readyz or /status` });
  }
}

function isLoopback(addr: string | undefined): boolean {
  return addr !== undefined && (addr === '::1' || addr.startsWith('127.') || addr.startsWith('::ffff:127.'));
}

function sendText(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body, null, 2) + '\n');
}
