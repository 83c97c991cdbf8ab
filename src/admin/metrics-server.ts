// The metrics listener for Prometheus: /metrics only, over TLS, for scrapers whose bearer token the
// apiserver accepts and authorizes (metrics-auth.ts). It binds the node's address so an in-cluster
// Prometheus can reach hostNetwork pods; /status, drain and the probes stay on the loopback admin
// listener. The same connection budget and timeouts as the admin listener.
import { createServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Registry } from './metrics.ts';
import type { HostPort } from '../config/fields.ts';
import type { Logger } from '../base/logger.ts';
import { describeError } from '../base/errors.ts';
import { AdminConnections } from './admin-connections.ts';
import { openListener } from './admin-server.ts';
import type { ListenerHandover } from '../handover/handover-session.ts';
import type { ScrapeVerdict } from './metrics-auth.ts';

export const METRICS_MAX_CONNECTIONS = 16;
const IDLE_TIMEOUT_MS = 30_000;

export interface MetricsServerOptions {
  address: HostPort;
  /** PEM certificate chain and key, read and checked by the caller. */
  tls: { cert: string; key: string };
  registry: Registry;
  auth: { check(authorization: string | undefined, path: string): Promise<ScrapeVerdict> };
  reusePort?: boolean;
  /** --handover-socket: see AdminServerOptions.handover. */
  handover?: ListenerHandover;
  log: Logger;
}

export interface MetricsServer {
  readonly address: HostPort;
  close(): Promise<void>;
}

export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  const connections = new AdminConnections(METRICS_MAX_CONNECTIONS);
  let faulty = false;
  const server = createServer({ cert: opts.tls.cert, key: opts.tls.key, connectionsCheckingInterval: 1000 }, (req, res) => {
    const socket = req.socket;
    connections.requestStarted(socket);
    res.once('close', () => connections.requestEnded(socket));
    serve(opts, req, res, (fault) => {
      // A local fault (the apiserver cannot be asked) is logged when it starts and when it ends.
      if (fault !== undefined && !faulty) opts.log.warn({ detail: fault }, 'metrics scrapes cannot be authorized: local fault');
      if (fault === undefined && faulty) opts.log.info('metrics scrapes are authorized again');
      faulty = fault !== undefined;
    }).catch((err: unknown) => {
      opts.log.error({ err: describeError(err) }, 'metrics request failed');
      if (!res.headersSent) send(res, 500, 'internal error\n');
      else res.destroy();
    });
  });
  server.on('secureConnection', (socket: Socket) => connections.add(socket));
  // A TLS handshake that never completes holds no slot, but must not hold a descriptor for long.
  server.on('tlsClientError', () => undefined);
  server.keepAliveTimeout = 5000;
  server.headersTimeout = 5000;
  server.requestTimeout = 15_000;
  server.timeout = IDLE_TIMEOUT_MS;
  server.maxHeadersCount = 50;
  return openListener(server, opts.address, opts.reusePort === true, opts.log, 'metrics listener ready', opts.handover);
}

async function serve(opts: MetricsServerOptions, req: IncomingMessage, res: ServerResponse, fault: (detail: string | undefined) => void): Promise<void> {
  const path = new URL(req.url ?? '/', 'https://metrics').pathname;
  if (path !== '/metrics') return send(res, 404, 'only /metrics is served here\n');
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, `${req.method} not allowed on /metrics\n`);
  const verdict = await opts.auth.check(req.headers.authorization, path);
  fault(verdict.status === 503 ? verdict.reason : undefined);
  if (verdict.status !== 200) {
    return send(res, verdict.status, `${verdict.reason}\n`, verdict.status === 401 ? { 'www-authenticate': 'Bearer' } : {});
  }
  const text = await opts.registry.metrics();
  res.writeHead(200, { 'content-type': opts.registry.contentType });
  res.end(text);
}

function send(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'content-type': 'text/plain; charset=utf-8' });
  res.end(text);
}
