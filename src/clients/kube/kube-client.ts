// Requests to one Kubernetes API server: JSON in and out, a deadline on every call, errors that keep
// the status and Status reason, and watch streams read line by line. client-node supplies the
// credentials (certificates, tokens, exec and token-file providers); the HTTP is node's own, so
// timeouts, aborts and error bodies are under our control.
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createInterface } from 'node:readline';
import type { KubeConfig } from '@kubernetes/client-node';
import { changesSomething, type CallFence } from '../../base/call-fence.ts';
import { describeError } from '../../base/errors.ts';
import { KubeApiError, errorFromResponse } from './kube-api-error.ts';
import type { PooledTls, TlsAgentPool, TlsIdentityOptions } from './tls-agent-pool.ts';
import type { WatchEvent } from './kube-types.ts';

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptionsKw {
  query?: Query;
  body?: unknown;
  /** application/json unless a patch type is given. */
  contentType?: string;
  /** Per-call deadline; 0 or missing uses the client's default. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Accept header (default application/json); a PartialObjectMetadata form asks for metadata only. */
  accept?: string;
}

export interface KubeClientOptions {
  /** Deadline for ordinary calls (default 30 s). A hung apiserver must not hang a controller. */
  timeoutMs?: number;
  userAgent?: string;
  /**
   * Keep connections open between requests (idle ones close after 15 s). For a client that talks
   * all the time (the operator's management cluster): no TLS handshake per request. Off by default:
   * a client per workload cluster, used once a cycle, would only hold an idle socket.
   */
  keepAlive?: boolean;
  /**
   * Use this pool's shared keep-alive agent and TLS context for this client's TLS identity
   * (tls-agent-pool.ts) instead of client-node's agent: for the operator's many per-cluster clients,
   * which make one or two calls a cycle and never watch, all given the same pool. Idle sockets close
   * after 15 s. Absent: client-node's agent.
   */
  sharedTls?: TlsAgentPool;
  /** Checked just before every request that changes something (base/call-fence.ts). */
  fence?: CallFence;
}

export class KubeClient {
  readonly #kc: KubeConfig;
  readonly #server: URL;
  readonly #timeoutMs: number;
  readonly #userAgent: string;
  readonly #keepAlive: boolean;
  readonly #sharedTls: TlsAgentPool | undefined;
  readonly #fence: CallFence | undefined;
  #closedBecause: string | undefined;

  constructor(kc: KubeConfig, opts: KubeClientOptions = {}) {
    this.#kc = kc;
    this.#server = new URL(kc.getCurrentCluster()!.server);
    this.#timeoutMs = opts.timeoutMs || 30_000;
    this.#userAgent = opts.userAgent ?? 'kubeward';
    this.#keepAlive = opts.keepAlive ?? false;
    this.#sharedTls = opts.sharedTls;
    this.#fence = opts.fence;
  }

  /** Every later request fails with E_CLOSED naming `reason` (its credentials were replaced). */
  close(reason: string): void {
    this.#closedBecause = reason;
  }

  get server(): string {
    return this.#server.origin;
  }

  /**
   * SHA-256 of the first CA certificate the kubeconfig trusts for the apiserver (DER, hex), the one
   * TLS verification checks the apiserver against; "" when it trusts the system's CAs or none.
   */
  get caFingerprint(): string {
    const cluster = this.#kc.getCurrentCluster();
    const pem = cluster?.caData ? Buffer.from(cluster.caData, 'base64').toString('utf8') : cluster?.caFile ? readFileSync(cluster.caFile, 'utf8') : '';
    if (!pem.includes('BEGIN CERTIFICATE')) return '';
    return createHash('sha256').update(new X509Certificate(pem).raw).digest('hex');
  }

  async request<T>(method: string, path: string, opts: RequestOptionsKw = {}): Promise<T> {
    const res = await this.#send(method, path, opts, opts.timeoutMs || this.#timeoutMs);
    const text = await readBody(res, method, path);
    if ((res.statusCode ?? 0) >= 300) throw errorFromResponse(method, path, res.statusCode ?? 0, text);
    return (text === '' ? {} : JSON.parse(text)) as T;
  }

  /**
   * Streams a watch until the server ends it (resolves), the signal aborts (resolves), or it fails
   * (rejects; an ERROR event such as 410 Gone rejects with that status). `idleMs` bounds the
   * silence between lines, so a half-dead connection is noticed.
   */
  async watch<T>(
    path: string,
    query: Query,
    onEvent: (ev: WatchEvent<T>) => void,
    opts: { signal?: AbortSignal; idleMs: number; accept?: string },
  ): Promise<void> {
    const res = await this.#send('GET', path, { query: { ...query, watch: true }, signal: opts.signal, accept: opts.accept }, opts.idleMs);
    if ((res.statusCode ?? 0) >= 300) throw errorFromResponse('GET', path, res.statusCode ?? 0, await readBody(res, 'GET', path));
    // The request's socket timeout (idleMs) keeps running while the stream is open: silence ends it.
    const lines = createInterface({ input: res, crlfDelay: Infinity });
    try {
      for await (const line of lines) {
        if (line.trim() === '') continue;
        const ev = JSON.parse(line) as WatchEvent<T>;
        if (ev.type === 'ERROR') {
          const st = ev.object as { code?: number; reason?: string; message?: string };
          throw new KubeApiError({ method: 'WATCH', path, status: st.code, reason: st.reason, message: st.message ?? 'watch error' });
        }
        onEvent(ev);
      }
    } catch (err) {
      if (opts.signal?.aborted) return;
      if (err instanceof KubeApiError) throw err;
      throw new KubeApiError({ method: 'WATCH', path, message: describeError(err), cause: err });
    } finally {
      res.destroy();
    }
  }

  async #send(method: string, path: string, opts: RequestOptionsKw, timeoutMs: number): Promise<IncomingMessage> {
    const url = new URL(this.#server.pathname.replace(/\/$/, '') + path, this.#server);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    let options: RequestOptions & { ca?: unknown } = { method, headers: {} };
    if (this.#sharedTls !== undefined && sharesTls(this.#kc, url)) {
      await applyWithoutAgent(this.#kc, options);
      // Computed per call: an exec credential plugin may hand out a new client certificate.
      const shared = this.#sharedTls.pooledTls(options as TlsIdentityOptions);
      // The shared context holds the CA, certificate and key: the request goes without them, so the
      // agent's getName need not copy the options to leave them out (pooledRequestOptions).
      options = pooledRequestOptions(options, shared);
    } else {
      await this.#kc.applyToHTTPSOptions(options as never);
      // client-node's agent (one per KubeConfig, made without keep-alive): turned on once, in place,
      // so its TLS options stay client-node's own.
      const agent = options.agent as (HttpsAgent & { keepAlive?: boolean; options: { timeout?: number } }) | undefined;
      if (this.#keepAlive && agent instanceof HttpsAgent && !agent.keepAlive) {
        agent.keepAlive = true;
        agent.options.timeout ??= 15_000;
      }
    }
    const headers = options.headers as Record<string, string>;
    headers['accept'] = opts.accept ?? 'application/json';
    headers['user-agent'] = this.#userAgent;
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = JSON.stringify(opts.body);
      headers['content-type'] = opts.contentType ?? 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    const isHttps = url.protocol === 'https:';
    // A plain-http server (a test proxy) gets no TLS options and no TLS agent.
    const reqOpts: RequestOptions = isHttps ? options : { method, headers };
    // Built for this call alone: the signal goes in place rather than into one more copy.
    if (opts.signal) reqOpts.signal = opts.signal;
    // The last moment before the request goes (after the credentials, which may have awaited a plugin).
    opts.signal?.throwIfAborted();
    if (this.#closedBecause !== undefined) throw new KubeApiError({ method, path, message: `this Kubernetes client is closed: ${this.#closedBecause}` });
    if (this.#fence && changesSomething(method)) this.#fence.check({ service: 'kubernetes', method, path: url.pathname });
    return new Promise<IncomingMessage>((resolve, reject) => {
      const fail = (err: unknown): void => reject(new KubeApiError({ method, path, message: describeError(err), cause: err }));
      const req = (isHttps ? httpsRequest : httpRequest)(url, reqOpts, resolve);
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no response within ${timeoutMs} ms`)));
      req.on('error', fail);
      req.end(payload);
    });
  }
}

/**
 * Whether a request may go through the shared pool: https, and no proxy in the kubeconfig (a proxied
 * cluster keeps client-node's proxy agent).
 */
export function sharesTls(kc: KubeConfig, url: URL): boolean {
  return url.protocol === 'https:' && !kc.getCurrentCluster()?.proxyUrl;
}

/** The TLS material a pooled identity's SecureContext holds, left out of its requests. */
const CONTEXT_MATERIAL = new Set(['ca', 'cert', 'key', 'pfx', 'passphrase']);

/** A pooled call's options: everything client-node set but the material, with the shared agent and context. */
export function pooledRequestOptions(options: RequestOptions, shared: PooledTls): RequestOptions {
  const out: Record<string, unknown> = {};
  for (const k in options) if (!CONTEXT_MATERIAL.has(k)) out[k] = (options as Record<string, unknown>)[k];
  out.agent = shared.agent;
  out.secureContext = shared.secureContext;
  return out as RequestOptions;
}

/**
 * client-node's applyToHTTPSOptions (dist/config.js) without the agent it makes and keeps per
 * KubeConfig: that agent, unused with the pool, held a copy of the CA (and the Buffer pool slab
 * under it) per cluster. Its private applyOptions sets TLS options and credentials; basic auth is
 * added as applyToHTTPSOptions does. Falls back to applyToHTTPSOptions if that method is gone.
 */
async function applyWithoutAgent(kc: KubeConfig, options: RequestOptions): Promise<void> {
  const applyOptions = (kc as unknown as { applyOptions?: (o: object) => Promise<void> }).applyOptions;
  if (typeof applyOptions !== 'function') return kc.applyToHTTPSOptions(options as never);
  await applyOptions.call(kc, options);
  const user = kc.getCurrentUser();
  if (user?.username) options.auth = `${user.username}:${user.password}`;
}

/**
 * The whole body as text. Read with 'data' and 'end' rather than `for await`: the async iterator
 * made several promises and closures per chunk and per call, a few percent of the operator's
 * garbage in its first cycles (docs/design/operator-start.md).
 */
function readBody(res: IncomingMessage, method: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const cut = (err: unknown) => reject(new KubeApiError({ method, path, status: undefined, message: `response cut off: ${describeError(err)}`, cause: err }));
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('error', cut);
    // A response whose connection closed before its end: 'aborted' comes first, then 'error' or 'close'.
    res.on('close', () => {
      if (!res.complete) cut(new Error('aborted'));
    });
    res.on('end', () => resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')));
  });
}
