// A plain-HTTP proxy in front of a real kube-apiserver that can be told to fail: answer 500 with a
// text body (as a broken load balancer does), 500 with a ServerTimeout Status, 503, or hang. Tests
// point a kubeconfig at it (insecure-skip-tls-verify, it is http) to play an apiserver going away.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

export type ProxyMode = 'pass' | 'text-500' | 'status-timeout' | 'unavailable-503' | 'hang';

export interface KubeFaultProxy {
  readonly url: string;
  mode: ProxyMode;
  /** Requests answered with a fault so far. */
  readonly faulted: number;
  /** A kubeconfig (YAML) for this proxy with the given bearer token. */
  kubeconfig(token: string): string;
  close(): Promise<void>;
}

export async function startKubeFaultProxy(target: { server: string; ca: string }): Promise<KubeFaultProxy> {
  const upstream = new URL(target.server);
  const sockets = new Set<Socket>();
  let faulted = 0;
  const state = { mode: 'pass' as ProxyMode };
  const server: Server = createServer((req, res) => {
    if (state.mode !== 'pass') {
      faulted++;
      return fail(state.mode, res);
    }
    forward(req, res, upstream, target.ca);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    get mode() {
      return state.mode;
    },
    set mode(m: ProxyMode) {
      state.mode = m;
    },
    get faulted() {
      return faulted;
    },
    kubeconfig: (token) =>
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: proxy, cluster: {server: "${url}", insecure-skip-tls-verify: true}}]`,
        `users: [{name: u, user: {token: "${token}"}}]`,
        'contexts: [{name: proxy, context: {cluster: proxy, user: u}}]',
        'current-context: proxy',
        '',
      ].join('\n'),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

function fail(mode: ProxyMode, res: ServerResponse): void {
  switch (mode) {
    case 'text-500':
      res.writeHead(500, { 'content-type': 'text/plain' }).end('upstream connect error or disconnect/reset before headers');
      return;
    case 'status-timeout':
      res.writeHead(500, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'ServerTimeout',
          code: 500,
          message: 'the server cannot complete the requested operation at this time',
        }),
      );
      return;
    case 'unavailable-503':
      res
        .writeHead(503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'ServiceUnavailable', code: 503, message: 'unavailable' }));
      return;
    case 'hang':
    case 'pass':
      return;
  }
}

function forward(req: IncomingMessage, res: ServerResponse, upstream: URL, ca: string): void {
  const out = httpsRequest(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host }, ca },
    (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    },
  );
  out.on('error', () => res.destroy());
  res.on('close', () => out.destroy());
  req.pipe(out);
}
