// One keep-alive https.Agent and one TLS SecureContext per distinct TLS identity (CA, client
// certificate and key, verification, server name), shared by every client that has it. Without it
// each per-cluster client had client-node's own agent, without keep-alive: a full TLS handshake and
// a new SecureContext (the CA parsed again) on every call. Measured in the operator bench: the
// handshakes and contexts were the largest part of a cluster's first cycle (docs/operator-scale.md).
import { createHash } from 'node:crypto';
import { Agent as HttpsAgent } from 'node:https';
import { createSecureContext, type SecureContext } from 'node:tls';

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
 * docs/operator-scale.md), so keeping one per cluster between cycles (15 s before) made most of a
 * cluster's memory; a new handshake per cycle costs about 0.8 ms of CPU instead.
 */
const MAX_SOCKETS = 4;
const MAX_FREE_SOCKETS = 1;
const IDLE_MS = 2000;
/**
 * An identity unused this long, with no socket left, is dropped: its SecureContext holds about
 * 29 KiB of OpenSSL memory (the CA's store; measured in docs/operator-scale.md) and building it
 * again takes about 0.13 ms, against a cycle's handshake of 0.8 ms. A cycle's calls come well
 * within it; the cluster's next cycle (tens of seconds later) builds a new one.
 */
const DROP_AFTER_MS = 10_000;
/** Identities kept; the oldest is dropped past this (its sockets close when idle, then it is garbage). */
const MAX_IDENTITIES = 10_000;

interface Entry extends PooledTls {
  lastUsedMs: number;
}

/** In order of last use, oldest first. */
const pool = new Map<string, Entry>();

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

/** Drops the identities unused for DROP_AFTER_MS that have no socket; stops at the first recent one (the map is oldest first). */
function dropIdle(nowMs: number): void {
  for (const [key, e] of pool) {
    if (nowMs - e.lastUsedMs < DROP_AFTER_MS) return;
    if (hasSockets(e.agent)) continue;
    pool.delete(key);
  }
}

/** The shared agent and context for this identity, made on first use. nowMs: tests. */
export function pooledTls(o: TlsIdentityOptions, nowMs = Date.now()): PooledTls {
  dropIdle(nowMs);
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
  const agent = new HttpsAgent({ keepAlive: true, maxSockets: MAX_SOCKETS, maxFreeSockets: MAX_FREE_SOCKETS, timeout: IDLE_MS, scheduling: 'lifo' });
  const entry = { agent, secureContext, lastUsedMs: nowMs };
  pool.set(key, entry);
  if (pool.size > MAX_IDENTITIES) pool.delete(pool.keys().next().value!);
  return entry;
}

/** For tests: how many identities the pool holds. */
export function pooledTlsCount(): number {
  return pool.size;
}
