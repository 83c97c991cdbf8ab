// A kube-apiserver stand-in for the demo and for tests (testkit/apiserver-standin.ts): HTTPS with /readyz, /livez and /healthz that can
// be switched to healthy, failing (503, as in a graceful shutdown), hung (accepts, never answers) or
// closed (nothing listens), shut down gracefully as kube-apiserver is (shutdown()), plus a tiny API: /version, and /api/v1/namespaces/default/pods?watch=1
// which streams a line every 500 ms until the client goes away (a stand-in for a watch).
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type ReadyzMode = 'ok' | 'fail' | 'hang';

export interface StandinOptions {
  cert: string;
  key: string;
  /** Require and verify client certificates from this CA (as etcd and anonymous-off apiservers do). */
  clientCa?: string;
  /** Bearer token that /readyz requires when set; anything else gets 401. */
  token?: string;
  host?: string;
  /** 0 picks a free port; after close() and open() the same port is reused. */
  port?: number;
  name?: string;
  /** What GET /version reports (default v1.33.0-kubeward-standin); `version` changes it at run time, as an upgrade does. */
  gitVersion?: string;
}

export class ApiserverStandin {
  readonly name: string;
  readonly host: string;
  #port: number;
  #mode: ReadyzMode = 'ok';
  #server: Server | undefined;
  /** The latest close, for a caller that comes while it runs (or after: then it is settled). */
  #closing: Promise<void> = Promise.resolve();
  readonly #opts: StandinOptions;
  readonly #sockets = new Set<Socket>();
  #requests = 0;
  /** Stopping as kube-apiserver does after its shutdown delay: every answer closes its connection. */
  #stopping = false;
  readonly #watches = new Set<ServerResponse>();
  version: string;

  constructor(opts: StandinOptions) {
    this.#opts = opts;
    this.version = opts.gitVersion ?? 'v1.33.0-kubeward-standin';
    this.name = opts.name ?? 'apiserver';
    this.host = opts.host ?? '127.0.0.1';
    this.#port = opts.port ?? 0;
  }

  get port(): number {
    return this.#port;
  }

  get mode(): ReadyzMode {
    return this.#mode;
  }

  get listening(): boolean {
    return this.#server !== undefined;
  }

  /** Requests served since start (any path). */
  get requests(): number {
    return this.#requests;
  }

  get openConnections(): number {
    return this.#sockets.size;
  }

  setReadyz(mode: ReadyzMode): void {
    this.#mode = mode;
  }

  /** Starts listening (again); the port stays the same across close/open. */
  async open(): Promise<void> {
    if (this.#server) return;
    const server = createServer(
      {
        cert: this.#opts.cert,
        key: this.#opts.key,
        ca: this.#opts.clientCa,
        requestCert: this.#opts.clientCa !== undefined,
        rejectUnauthorized: this.#opts.clientCa !== undefined,
      },
      (req, res) => this.#handle(req, res),
    );
    server.on('connection', (s: Socket) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    server.on('tlsClientError', () => {});
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, this.host, () => resolve());
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  /**
   * A graceful shutdown as kube-apiserver runs it (SIGTERM with --shutdown-delay-duration): /readyz
   * answers 503 at once while everything else is served as before, new connections included, for
   * delayMs (the time load balancers need to see it); then the listener closes, idle keep-alive
   * connections are closed, requests in flight are answered with "Connection: close", watches end,
   * and it resolves once every connection has closed (those left after graceMs are dropped).
   */
  async shutdown(delayMs: number, graceMs = 5000): Promise<void> {
    this.#mode = 'fail';
    await new Promise((r) => setTimeout(r, delayMs));
    const server = this.#server;
    if (!server) return;
    this.#stopping = true;
    this.#server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    for (const res of this.#watches) res.end();
    const timer = setTimeout(() => {
      for (const s of this.#sockets) s.destroy();
    }, graceMs);
    await closed;
    clearTimeout(timer);
    this.#stopping = false;
  }

  /** Stops listening and drops every connection, as a killed process would. A second caller joins the first close. */
  close(): Promise<void> {
    const server = this.#server;
    if (!server) return this.#closing;
    this.#server = undefined;
    for (const s of this.#sockets) s.destroy();
    return (this.#closing = new Promise<void>((resolve) => server.close(() => resolve())));
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    this.#requests++;
    if (this.#stopping) res.setHeader('connection', 'close');
    const url = new URL(req.url ?? '/', 'https://standin');
    if (url.pathname === '/readyz' || url.pathname === '/livez' || url.pathname === '/healthz' || url.pathname === '/health') {
      return this.#health(req, res);
    }
    if (url.pathname === '/version') {
      const [major = '', minor = ''] = this.version.replace(/^v/, '').split('.');
      return json(res, 200, { major, minor, gitVersion: this.version, server: this.name });
    }
    if (url.pathname.startsWith('/api/v1/') && url.searchParams.get('watch') === '1') {
      return this.#watch(res);
    }
    if (url.pathname.startsWith('/api')) return json(res, 200, { kind: 'Status', server: this.name, path: url.pathname });
    if (url.pathname.startsWith('/bytes/')) return this.#bytes(url, res);
    json(res, 404, { kind: 'Status', code: 404, message: `no ${url.pathname} here` });
  }

  #health(req: IncomingMessage, res: ServerResponse): void {
    if (this.#mode === 'hang') return; // the request is left open until the client gives up
    if (this.#opts.token && req.headers.authorization !== `Bearer ${this.#opts.token}`) {
      return text(res, 401, 'Unauthorized');
    }
    if (this.#mode === 'fail') return text(res, 503, '[-]shutdown failed: process is shutting down\nreadyz check failed');
    text(res, 200, 'ok');
  }

  #watch(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    let n = 0;
    const timer = setInterval(() => {
      res.write(JSON.stringify({ type: 'BOOKMARK', object: { server: this.name, n: n++ } }) + '\n');
    }, 500);
    this.#watches.add(res);
    res.on('close', () => {
      clearInterval(timer);
      this.#watches.delete(res);
    });
  }

  /** /bytes/N: N bytes of a repeating pattern, for transfer tests. */
  #bytes(url: URL, res: ServerResponse): void {
    const size = Math.min(Number(url.pathname.split('/')[2]) || 0, 1 << 30);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size });
    const chunk = Buffer.alloc(64 * 1024, 'kubeward');
    let left = size;
    const pump = (): void => {
      while (left > 0) {
        const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
        left -= piece.length;
        if (!res.write(piece)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  }
}

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain' });
  res.end(body + '\n');
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body) + '\n');
}
