// One keep-alive https.Agent and one TLS SecureContext per distinct TLS identity (CA, client
// certificate and key, verification, server name), shared by every client that has it. Without it
// each per-cluster client had client-node's own agent, without keep-alive: a full TLS handshake and
// a new SecureContext (the CA parsed again) on every call. Measured in the operator bench: the
// handshakes and contexts were the largest part of a cluster's first cycle (docs/design/operator-start.md).
import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { Agent as HttpsAgent } from 'node:https';
import { createSecureContext, type ConnectionOptions, type SecureContext, type TLSSocket } from 'node:tls';

/** The TLS fields of client-node's applyToHTTPSOptions output that make up an identity. */
export interface TlsIdentityOptions {
  ca?: string | Buffer | (string | Buffer)[];
  cert?: string | Buffer;
  key?: string | Buffer;
  pfx?: string | Buffer;
  passphrase?: string;
  rejectUnauthorized?: boolean;
  servername?: string;
}

export interface PooledTls {
  agent: HttpsAgent;
  secureContext: SecureContext;
}

/**
 * Sockets per origin: a cluster's routegc and flight each make one call at a time, so two serve a
 * cluster; a few more for clusters that share an origin and identity. A free socket closes after
 * IDLE_MS: a cycle's calls come back to back and reuse it, while the cluster's next cycle is tens of
 * seconds away. An idle TLS socket holds about 80 KiB of native memory (OpenSSL's buffers, measured in
 * docs/design/operator-memory.md), so keeping one per cluster between cycles would make most of a
 * cluster's memory; a new handshake per cycle costs about 0.8 ms of CPU instead.
 */
const MAX_SOCKETS = 4;
const MAX_FREE_SOCKETS = 1;
const IDLE_MS = 2000;
/**
 * An identity unused this long, with no socket left, is dropped and its SecureContext's OpenSSL
 * memory (about 29 KiB: the CA's store, the client certificate and key; docs/design/operator-memory.md) is
 * freed at once (closeContext). Building it again takes about 0.13 ms against a cycle's handshake of
 * 0.8 ms; a cycle's calls come back to back, within it, and the cluster's next cycle (tens of seconds
 * later) builds a new one. Kept 10 s and freed by V8's next full collection instead, at the start,
 * when every cluster has its first cycle within seconds, nearly every cluster's context would be
 * alive at once, and glibc's arena would keep the pages of that peak as free holes.
 */
const DROP_AFTER_MS = 4000;
/** Identities kept; the oldest is dropped past this (its sockets close when idle, then it is garbage). */
const MAX_IDENTITIES = 10_000;

interface Entry extends PooledTls {
  agent: SessionKeepingAgent;
  lastUsedMs: number;
}

/**
 * TLS sessions kept past their agent, per identity and origin, most recently stored last. An agent
 * caches the sessions of its own connections, but it is dropped between a cluster's cycles (above),
 * so each cycle made a full handshake: key exchange, the server's certificate chain checked, and
 * Node's getPeerCertificate and name check. With the session kept (a Buffer with the ticket and the
 * certificates: about 4.3 KiB with a client certificate) the next cycle's connection resumes it and
 * skips all of that;
 * node checks the server's name only on a full handshake, and the session was made by one that
 * passed the same checks (same CA and verification: they are part of the identity key).
 */
interface SessionStore {
  sessions: Map<string, Buffer>;
  /** Contexts freed by closeContext (tests). */
  closedContexts: number;
}

/**
 * Kept as a copy of its own. The session node hands over is a slice of a Buffer pool slab (64 KiB in
 * Node 24; Buffer.poolSize), and a kept slice keeps its whole slab alive: in the operator at N=600,
 * 155 slabs (10 MiB, 14 KiB per cluster) were held by about six small slices each, mostly sessions
 * and the CA of requests in flight (heap snapshot, docs/design/operator-memory.md).
 */
function keepSession(sessions: Map<string, Buffer>, at: string, session: Buffer): void {
  const own = Buffer.allocUnsafeSlow(session.length);
  session.copy(own);
  sessions.delete(at);
  sessions.set(at, own);
  if (sessions.size > MAX_IDENTITIES) sessions.delete(sessions.keys().next().value!);
}

/** An agent that resumes the identity's kept session on each new connection and keeps the newest one. */
class SessionKeepingAgent extends HttpsAgent {
  readonly #identity: string;
  readonly #context: SecureContext;
  readonly #store: SessionStore;
  #closed = false;

  constructor(identity: string, context: SecureContext, store: SessionStore, options: ConstructorParameters<typeof HttpsAgent>[0]) {
    super(options);
    this.#identity = identity;
    this.#context = context;
    this.#store = store;
  }

  /**
   * Frees the context's OpenSSL memory now rather than at V8's next full collection. Only for an
   * identity with no socket: node aborts the process when it wraps a new socket in a closed context
   * (crypto_tls.cc asserts the SSL it makes from it), so a connection this agent still makes (a
   * caller that got the entry before it was dropped) builds a context of its own from the options.
   */
  closeContext(): void {
    if (this.#closed) return;
    const native = (this.#context as { context?: { close?: () => void } }).context;
    if (typeof native?.close !== 'function') return; // then V8's collection frees it, as before
    this.#closed = true;
    this.#store.closedContexts++;
    native.close();
  }

  /**
   * The key of the agent's socket lists. https.Agent's own (lib/https.js) appends the CA, certificate
   * and key as text: a string of several KiB per request, kept as a key while a socket of the origin
   * lives. This agent serves one identity (its context holds that material), so the origin and the
   * other TLS options are enough, and a client may leave the material in its options.
   */
  override getName(options?: ConnectionOptions & { host?: string | null; port?: number | string | null }): string {
    // KubeClient's pooled calls come without the material (kube-client.ts pooledRequestOptions):
    // no copy then; node calls this two or three times per request.
    if (
      !options ||
      (options.ca === undefined && options.cert === undefined && options.key === undefined && options.pfx === undefined && options.passphrase === undefined)
    )
      return super.getName(options);
    return super.getName({ ...options, ca: undefined, cert: undefined, key: undefined, pfx: undefined, passphrase: undefined });
  }

  // http.Agent calls createConnection(options, callback); https.Agent's own (lib/https.js) then uses
  // options.session when set (before its per-agent cache) and caches what the socket's 'session' gives.
  override createConnection(options: ConnectionOptions, callback?: (err: Error | null, socket: Duplex) => void): Duplex {
    const at = `${this.#identity} ${options.host ?? ''}:${options.port ?? ''}:${options.servername ?? ''}`;
    const { sessions } = this.#store;
    const kept = options.session === undefined ? sessions.get(at) : undefined;
    const make = super.createConnection as (o: ConnectionOptions, cb?: (err: Error | null, socket: Duplex) => void) => TLSSocket;
    // The socket keeps the options it was made with for its life (node's tls.connect). With this
    // identity's context they need no CA, certificate or key, which client-node decodes per request
    // into small Buffers, slices of a pool slab that they would keep alive; a closed context (a
    // connection after the drop) is left out instead, and tls.connect builds one from them.
    const tlsOptions =
      this.#closed && options.secureContext === this.#context
        ? { secureContext: undefined }
        : { ca: undefined, cert: undefined, key: undefined, pfx: undefined, passphrase: undefined };
    const socket = make.call(this, { ...options, ...tlsOptions, ...(kept ? { session: kept } : {}) }, callback);
    socket.on('session', (session: Buffer) => keepSession(sessions, at, session));
    // As the agent does with its own cache: a connection that failed may have failed on the session.
    socket.once('close', (hadError: boolean) => {
      if (hadError) sessions.delete(at);
    });
    return socket;
  }
}

function feed(h: ReturnType<typeof createHash>, label: string, v: string | Buffer | (string | Buffer)[] | boolean | undefined): void {
  const parts = v === undefined ? [] : Array.isArray(v) ? v : [v];
  h.update(`${label}:${parts.length};`);
  for (const p of parts) {
    const b = typeof p === 'boolean' ? String(p) : p;
    h.update(`${Buffer.byteLength(b)}:`);
    h.update(b);
  }
}

/** The pool key: a digest, so certificate and key material is not kept as a Map key string. */
export function tlsIdentityKey(o: TlsIdentityOptions): string {
  const h = createHash('sha256');
  feed(h, 'ca', o.ca);
  feed(h, 'cert', o.cert);
  feed(h, 'key', o.key);
  feed(h, 'pfx', o.pfx);
  feed(h, 'pass', o.passphrase);
  feed(h, 'verify', o.rejectUnauthorized !== false);
  feed(h, 'sni', o.servername);
  return h.digest('base64');
}

function hasSockets(agent: HttpsAgent): boolean {
  const any = (m: NodeJS.ReadOnlyDict<unknown[]>) => Object.values(m).some((list) => (list?.length ?? 0) > 0);
  return any(agent.sockets) || any(agent.freeSockets) || any(agent.requests);
}

/**
 * The agents, contexts and kept sessions of the TLS identities of many clients: the operator's
 * cluster source (secretClusterSource) makes one and hands it to every per-cluster kube client
 * (KubeClientOptions.sharedTls).
 */
export class TlsAgentPool {
  /** In order of last use, oldest first. */
  readonly #pool = new Map<string, Entry>();
  readonly #store: SessionStore = { sessions: new Map(), closedContexts: 0 };

  /** Drops the identities unused for DROP_AFTER_MS that have no socket; stops at the first recent one (the map is oldest first). */
  #dropIdle(nowMs: number): void {
    for (const [key, e] of this.#pool) {
      if (nowMs - e.lastUsedMs < DROP_AFTER_MS) return;
      if (hasSockets(e.agent)) continue;
      this.#pool.delete(key);
      e.agent.closeContext();
    }
  }

  /** The shared agent and context for this identity, made on first use. nowMs: tests. */
  pooledTls(o: TlsIdentityOptions, nowMs = Date.now()): PooledTls {
    const pool = this.#pool;
    this.#dropIdle(nowMs);
    const key = tlsIdentityKey(o);
    const hit = pool.get(key);
    if (hit) {
      // Most recently used last, so the oldest is dropped first.
      pool.delete(key);
      hit.lastUsedMs = nowMs;
      pool.set(key, hit);
      return hit;
    }
    const secureContext = createSecureContext({ ca: o.ca, cert: o.cert, key: o.key, pfx: o.pfx, passphrase: o.passphrase });
    const agent = new SessionKeepingAgent(key, secureContext, this.#store, {
      keepAlive: true,
      maxSockets: MAX_SOCKETS,
      maxFreeSockets: MAX_FREE_SOCKETS,
      timeout: IDLE_MS,
      scheduling: 'lifo',
      // The kept sessions (SessionStore) are copies; the agent's own cache would keep node's slices.
      maxCachedSessions: 0,
    });
    const entry = { agent, secureContext, lastUsedMs: nowMs };
    pool.set(key, entry);
    if (pool.size > MAX_IDENTITIES) {
      // Past the bound the oldest goes even with sockets: its context is left to V8, which frees it
      // once those sockets are gone.
      const [oldKey, oldest] = pool.entries().next().value!;
      pool.delete(oldKey);
      if (!hasSockets(oldest.agent)) oldest.agent.closeContext();
    }
    return entry;
  }

  /** For tests: how many identities the pool holds. */
  pooledTlsCount(): number {
    return this.#pool.size;
  }

  /** For tests: how many dropped identities' contexts were freed at once. */
  closedTlsContexts(): number {
    return this.#store.closedContexts;
  }

  /** For tests: the bytes the kept sessions hold, and the bytes of the ArrayBuffers under them. */
  keptTlsSessionBytes(): { length: number; held: number } {
    let length = 0;
    let held = 0;
    for (const b of this.#store.sessions.values()) {
      length += b.length;
      held += b.buffer.byteLength;
    }
    return { length, held };
  }

  /** For tests and status: how many TLS sessions are kept. */
  keptTlsSessions(): number {
    return this.#store.sessions.size;
  }
}
