// Authenticated JSON requests to a service from the catalog: the token header, one re-authentication on
// 401, the Nova microversion header, errors with the service's fault type, and paged lists whose
// bodies are checked (response-body.ts): an unexpected 200 or a paging loop is an error, never a list.
import { KubewardError } from '../../base/errors.ts';
import type { KeystoneSession } from './keystone-session.ts';
import type { ServiceType } from './service-catalog.ts';
import { OpenStackError, codeForStatus, parseFault } from './openstack-error.ts';
import { sendWithRetries, type HeaderReader, type SendResult, type SenderDeps } from './http-sender.ts';
import { OpenStackBodyError, parseResponseText, readArrayBody, readListPage, readObjectBody, type BodySource } from './response-body.ts';

export type Query = Record<string, string | number | boolean | undefined>;

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';
  /** Relative to the service's endpoint, starting with "/". */
  path: string;
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
  /** true lets a POST be retried after a 5xx or timeout (actions safe to repeat); false keeps a PUT from being retried (retry-policy.ts). */
  idempotent?: boolean;
  signal?: AbortSignal;
}

export interface ApiResponse<T> {
  status: number;
  headers: HeaderReader;
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
  #closedBecause: string | undefined;

  constructor(session: KeystoneSession, deps: SenderDeps, computeApiVersion: string) {
    this.#session = session;
    this.#deps = deps;
    this.#computeApiVersion = computeApiVersion;
  }

  /** Every later request fails with E_CLOSED (credentials replaced); the token is dropped. */
  close(reason: string): void {
    this.#closedBecause = reason;
    this.#session.invalidate();
  }

  /** Sends the request; any status >= 400 is thrown as an OpenStackError. */
  async request<T>(service: ServiceType, req: ApiRequest): Promise<ApiResponse<T>> {
    this.#throwIfClosed();
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
    return { status: r.status, headers: r.headers, body: parseResponseText(r.text) as T, requestId: r.requestId };
  }

  /** A single object under `key` (`{"server": {...}}`); any other 200 body is an OpenStackBodyError. */
  async object<T>(service: ServiceType, req: ApiRequest, key: string): Promise<T> {
    const res = await this.request<unknown>(service, req);
    return readObjectBody<T>(res.body, key, this.#source(service, req, res));
  }

  /** Like object(), but a 404 gives undefined (and a 200 without the object is still an error, not "absent"). */
  async objectOrAbsent<T>(service: ServiceType, req: ApiRequest, key: string): Promise<T | undefined> {
    const res = await this.requestOrAbsent<unknown>(service, req);
    return res === undefined ? undefined : readObjectBody<T>(res.body, key, this.#source(service, req, res));
  }

  /** An array under `key` that is not a paged list (Nova tags, Neutron extensions). */
  async array<T>(service: ServiceType, req: ApiRequest, key: string): Promise<T[]> {
    const res = await this.request<unknown>(service, req);
    return readArrayBody<T>(res.body, key, this.#source(service, req, res));
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
   * links, asks again with marker = the last item's id. Every page must be a list under `key`; a
   * marker (or next query) seen before, an item ID met on an earlier page, or more than MAX_PAGES
   * pages is a paging loop: an OpenStackBodyError, never a list that looks complete.
   */
  async listAll<T extends { id?: string }>(service: ServiceType, path: string, key: string, query: Query = {}, opts: PageOptions = {}): Promise<T[]> {
    const out: T[] = [];
    const seenPages = new Set<string>();
    const seenIds = new Set<string>();
    let q: Query = { ...query, limit: opts.pageSize };
    seenPages.add(pageKey(q));
    for (let page = 0; page < MAX_PAGES; page++) {
      const req: ApiRequest = { method: 'GET', path, query: q, signal: opts.signal };
      const res = await this.request<unknown>(service, req);
      const src = this.#source(service, req, res);
      const { items, links } = readListPage<T>(res.body, key, src);
      for (const item of items) {
        if (typeof item.id !== 'string') continue;
        if (seenIds.has(item.id))
          throw new OpenStackBodyError('PagingLoop', src, `item ${item.id} came again on page ${page + 1}: the marker does not advance`);
        seenIds.add(item.id);
      }
      out.push(...items);
      const next = nextQuery(links, q, items, opts.pageSize);
      if (!next) return out;
      if (next === 'unreadable') throw new OpenStackBodyError('UnexpectedBody', src, `"${key}_links" has a next link that is not a URL`);
      const k = pageKey(next);
      if (seenPages.has(k)) throw new OpenStackBodyError('PagingLoop', src, `the next page (${k}) was asked for before`);
      seenPages.add(k);
      q = next;
    }
    throw new OpenStackBodyError('PagingLoop', { service: SERVICE_NAMES[service], method: 'GET', path, status: 200 }, `more than ${MAX_PAGES} pages`);
  }

  #source(service: ServiceType, req: ApiRequest, res: ApiResponse<unknown>): BodySource {
    const url = buildUrl('http://x', req.path, req.query);
    return { service: SERVICE_NAMES[service], method: req.method, path: url.pathname + url.search, status: res.status, requestId: res.requestId };
  }

  #throwIfClosed(): void {
    if (this.#closedBecause !== undefined) throw new KubewardError('E_CLOSED', `this OpenStack client is closed: ${this.#closedBecause}`);
  }

  async #send(service: ServiceType, url: URL, req: ApiRequest): Promise<{ result: SendResult; token: string }> {
    const token = (await this.#session.token(req.signal)).value;
    // Closed while the token was fetched: the old credentials send nothing more.
    this.#throwIfClosed();
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

/** The marker, or the whole query when the service pages by something else. */
function pageKey(q: Query): string {
  return q.marker !== undefined
    ? `marker=${String(q.marker)}`
    : JSON.stringify(
        Object.entries(q)
          .filter(([, v]) => v !== undefined)
          .sort(),
      );
}

function nextQuery(
  links: { rel?: unknown; href?: unknown }[] | undefined,
  current: Query,
  items: { id?: string }[],
  pageSize: number | undefined,
): Query | 'unreadable' | undefined {
  const next = links?.find((l) => typeof l === 'object' && l !== null && l.rel === 'next' && typeof l.href === 'string' && l.href !== '');
  if (next) {
    // An unreadable next link is not the end of the list: the caller treats 'unreadable' as an error.
    if (!URL.canParse(next.href as string, 'http://link.invalid')) return 'unreadable';
    return Object.fromEntries(new URL(next.href as string, 'http://link.invalid').searchParams);
  }
  const last = items.at(-1);
  if (pageSize !== undefined && items.length === pageSize && last?.id) return { ...current, marker: last.id };
  return undefined;
}
