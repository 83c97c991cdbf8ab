// The OpenStack client's transport on node:http and node:https with keep-alive agents, instead of
// undici's fetch: the operator makes thousands of small calls at its start,
// and fetch's Request, Response, Headers and stream objects cost about 25 KiB of garbage and a
// measurable share of the start's CPU per call (docs/design/operator-start.md). Same contract as the fetch
// it replaces (http-sender.ts): resolves with any status, rejects on a network failure or when the
// signal aborts (the sender tells its timeout from the caller's abort), and reads the whole body.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { FetchFn, FetchResponse } from './http-sender.ts';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;

/**
 * Idle connections kept per origin. With 4 (undici's figure) the operator's start, a burst of a
 * hundred or more calls in flight to one endpoint, closed every connection past the fourth after its
 * answer and opened a new one for the next call: 1,724 connections for 4,000 calls at N=1,000
 * (docs/design/operator-start.md), each a full TLS handshake against a real cloud. This is not
 * a cap on connections (there is none, for isolation): idle ones still close after keepAliveMs, so
 * after a burst nothing is kept, and the calls in flight, bounded by the workers (at most 256 per
 * controller), bound how many can be idle at once.
 */
export const FREE_SOCKETS = 256;

/** A body larger than this is not read (no OpenStack answer kubeward asks for comes near it). */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

export interface NodeFetchOptions {
  /** Connections per origin (default: no cap); more requests wait for a free one. */
  maxSockets?: number;
  /** Idle connections kept per origin (default FREE_SOCKETS), each closed after keepAliveMs idle. */
  maxFreeSockets?: number;
  /** Idle time after which a kept connection is closed (default 4 s, as undici). */
  keepAliveMs?: number;
  maxBodyBytes?: number;
}

/** Headers of an answer, looked up by lower-case name as fetch's Headers.get does. */
function headerReader(res: IncomingMessage): FetchResponse['headers'] {
  return {
    get: (name) => {
      const v = res.headers[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    },
  };
}

const CREDENTIAL_HEADERS = new Set(['x-auth-token', 'x-subject-token', 'authorization', 'proxy-authorization', 'cookie']);

/** The headers without those that carry a credential (any case), for a request to another origin. */
export function withoutCredentials(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) if (!CREDENTIAL_HEADERS.has(k.toLowerCase())) out[k] = v;
  return out;
}

/** A network failure as fetch reports one ("fetch failed", the system error as its cause), so messages stay the same. */
function networkError(cause: unknown): Error {
  return new TypeError('fetch failed', { cause });
}

/**
 * One FetchFn with its two agents. The operator shares one between every cluster's client, so a
 * cloud's endpoints are one pool of connections, whichever cluster asks.
 */
export function nodeFetch(o: NodeFetchOptions = {}): FetchFn & { destroy(): void } {
  const agentOpts = {
    keepAlive: true,
    keepAliveMsecs: 1000,
    // No cap per origin, as undici has none: clusters in one region share its endpoints, and a few
    // clusters' hung calls must not hold the connections every other cluster waits for. The workers
    // bound the calls in flight.
    maxSockets: o.maxSockets ?? Infinity,
    maxFreeSockets: o.maxFreeSockets ?? FREE_SOCKETS,
    timeout: o.keepAliveMs ?? 4000,
  };
  const http = new HttpAgent(agentOpts);
  const https = new HttpsAgent(agentOpts);
  const limit = o.maxBodyBytes ?? MAX_BODY_BYTES;
  const once = (url: URL, init: RequestInit): Promise<FetchResponse & { location?: string }> =>
    new Promise((resolve, reject) => {
      const signal = init.signal ?? undefined;
      if (signal?.aborted) return reject(signal.reason);
      const secure = url.protocol === 'https:';
      const headers: Record<string, string | number> = { ...(init.headers as Record<string, string> | undefined) };
      const body = typeof init.body === 'string' ? Buffer.from(init.body) : undefined;
      if (body) headers['content-length'] = body.length;
      const req = (secure ? httpsRequest : httpRequest)(url, { method: init.method ?? 'GET', headers, agent: secure ? https : http, signal });
      req.on('error', (err) => reject(signal?.aborted ? signal.reason : networkError(err)));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > limit) {
            // Rejected first: destroying the answer emits 'aborted' at once.
            reject(networkError(new Error(`the response body is larger than ${limit} bytes`)));
            res.destroy();
            return;
          }
          chunks.push(c);
        });
        res.on('error', (err) => reject(signal?.aborted ? signal.reason : networkError(err)));
        // An answer cut off before its end (connection reset, aborted) is a failed attempt, not a short body.
        res.on('aborted', () => reject(signal?.aborted ? signal.reason : networkError(new Error('the response was cut off'))));
        res.on('end', () => {
          if (!res.complete) return reject(networkError(new Error('the response was cut off')));
          const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: headerReader(res), text: async () => text, location: res.headers.location });
        });
      });
      req.end(body);
    });
  // Redirects are followed as fetch follows them (a proxy sending http to https, an endpoint moved):
  // 303, and 301/302 after a POST, go on as a GET without a body; at most MAX_REDIRECTS.
  const send: FetchFn = async (url, init) => {
    let at = url;
    let next: RequestInit = init;
    for (let hop = 0; ; hop++) {
      const res = await once(at, next);
      if (!REDIRECTS.has(res.status) || res.location === undefined) return res;
      if (hop === MAX_REDIRECTS) throw networkError(new Error(`more than ${MAX_REDIRECTS} redirects`));
      const from = at;
      at = new URL(res.location, at);
      if (at.protocol !== 'http:' && at.protocol !== 'https:') throw networkError(new Error(`a redirect to ${at.protocol} is not followed`));
      // fetch drops Authorization and Cookie when a redirect leaves the origin; Keystone's token
      // travels in X-Auth-Token, which fetch would have sent on. It stays with the origin that was asked.
      if (at.origin !== from.origin) next = { ...next, headers: withoutCredentials(next.headers as Record<string, string> | undefined) };
      const method = (next.method ?? 'GET').toUpperCase();
      if (res.status === 303 ? method !== 'HEAD' : (res.status === 301 || res.status === 302) && method === 'POST') {
        const { 'content-type': _t, ...headers } = next.headers as Record<string, string>;
        next = { ...next, method: 'GET', body: undefined, headers };
      }
    }
  };
  return Object.assign(send, {
    destroy: () => {
      http.destroy();
      https.destroy();
    },
  });
}
