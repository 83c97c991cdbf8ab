// Authenticated JSON requests to a service from the catalog: the token header, one re-authentication on
// 401, the Nova microversion header, errors with the service's fault type, and paged lists.
import { KubewardError } from '../../base/errors.ts';
import type { KeystoneSession } from './keystone-session.ts';
import type { ServiceType } from './service-catalog.ts';
import { OpenStackError, codeForStatus, parseFault } from './openstack-error.ts';
import { sendWithRetries, type SendResult, type SenderDeps } from './http-sender.ts';

export type Query = Record<string, string | number | boolean | undefined>;

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';
  /** Relative to the service's endpoint, starting with "/". */
  path: string;
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
  /** Lets a POST be retried after a 5xx or timeout (actions that are safe to repeat). */
  idempotent?: boolean;
  signal?: AbortSignal;
}

export interface ApiResponse<T> {
  status: number;
  headers: Headers;
  body: T;
  requestId?: string;
}

const SERVICE_NAMES: Record<ServiceType, string> = {
  identity: 'keystone',
  compute: 'nova',
  network: 'neutron',
  'block-storage': 'cinder',
  'load-balancer': 'octavia',
  image: 'glance',
};

export interface PageOptions {
  /** Sent as `limit`; the service's own maximum applies when absent. */
  pageSize?: number;
  signal?: AbortSignal;
}

/** Upper bound on pages followed, so a service that keeps answering "next" cannot loop us forever. */
const MAX_PAGES = 10_000;

export class OpenStackHttp {
  readonly #session: KeystoneSession;
  readonly #deps: SenderDeps;
  readonly #computeApiVersion: string;

  constructor(session: KeystoneSession, deps: SenderDeps, computeApiVersion: string) {
    this.#session = session;
    this.#deps = deps;
    this.#computeApiVersion = computeApiVersion;
  }

  /** Sends the request; any status >= 400 is thrown as an OpenStackError. */
  async request<T>(service: ServiceType, req: ApiRequest): Promise<ApiResponse<T>> {
    const base = await this.#session.endpoint(service, req.signal);
    const url = buildUrl(base, req.path, req.query);
    let res = await this.#send(service, url, req);
    if (res.result.status === 401) {
      // The token was revoked or expired early (Keystone restarted, keys rotated): authenticate once more.
      this.#session.invalidate(res.token);
      res = await this.#send(service, url, req);
    }
    const r = res.result;
    if (r.status >= 400) {
      const fault = parseFault(r.text);
      throw new OpenStackError(codeForStatus(r.status), {
        service: SERVICE_NAMES[service],
        method: req.method,
        path: url.pathname + url.search,
        status: r.status,
        faultType: fault.type,
        faultMessage: fault.message,
        requestId: r.requestId,
        attempts: r.attempts,
      });
    }
    return { status: r.status, headers: r.headers, body: parseBody(r.text) as T, requestId: r.requestId };
  }

  /** Like request(), but a 404 gives undefined. */
  async requestOrAbsent<T>(service: ServiceType, req: ApiRequest): Promise<ApiResponse<T> | undefined> {
    try {
      return await this.request<T>(service, req);
    } catch (err) {
      if (err instanceof OpenStackError && err.status === 404) return undefined;
      throw err;
    }
  }

  /**
   * Every item of a paged list. Follows `<key>_links` rel=next (its query applied to our own endpoint,
   * since services behind proxies advertise internal host names), or, when a full page came without
   * links, asks again with marker = the last item's id.
   */
  async listAll<T extends { id?: string }>(service: ServiceType, path: string, key: string, query: Query = {}, opts: PageOptions = {}): Promise<T[]> {
    const out: T[] = [];
    const seen = new Set<string>();
    let q: Query = { ...query, limit: opts.pageSize };
    for (let page = 0; page < MAX_PAGES; page++) {
      const { body } = await this.request<Record<string, unknown>>(service, { method: 'GET', path, query: q, signal: opts.signal });
      const items = (body?.[key] ?? []) as T[];
      out.push(...items);
      const next = nextQuery(body?.[`${key}_links`], q, items, opts.pageSize);
      if (!next) return out;
      const marker = String(next.marker ?? JSON.stringify(next));
      if (seen.has(marker)) return out;
      seen.add(marker);
      q = next;
    }
    throw new KubewardError('E_STATE', `${SERVICE_NAMES[service]} GET ${path}: more than ${MAX_PAGES} pages, giving up`);
  }

  async #send(service: ServiceType, url: URL, req: ApiRequest): Promise<{ result: SendResult; token: string }> {
    const token = (await this.#session.token(req.signal)).value;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (req.body !== undefined) headers['content-type'] = 'application/json';
    if (service === 'compute') {
      headers['openstack-api-version'] = `compute ${this.#computeApiVersion}`;
      headers['x-openstack-nova-api-version'] = this.#computeApiVersion;
    }
    Object.assign(headers, req.headers, { 'x-auth-token': token });
    const result = await sendWithRetries(this.#deps, {
      service: SERVICE_NAMES[service],
      method: req.method,
      url,
      headers,
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      idempotent: req.idempotent,
      signal: req.signal,
    });
    return { result, token };
  }
}

export function buildUrl(base: string, path: string, query: Query = {}): URL {
  const url = new URL(base + path);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
  return url;
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function nextQuery(links: unknown, current: Query, items: { id?: string }[], pageSize: number | undefined): Query | undefined {
  if (Array.isArray(links)) {
    const next = (links as { rel?: string; href?: string }[]).find((l) => l.rel === 'next' && l.href);
    if (next) return Object.fromEntries(new URL(next.href!, 'http://link.invalid').searchParams);
  }
  const last = items.at(-1);
  if (pageSize !== undefined && items.length === pageSize && last?.id) return { ...current, marker: last.id };
  return undefined;
}
