// The emulator's small HTTP toolkit: a route table with ":param" paths, request context, and error
// bodies shaped like each service's own (Neutron, Nova/Cinder, Keystone, Octavia).
import type { IncomingMessage } from 'node:http';

export type ServiceName = 'identity' | 'compute' | 'network' | 'volume' | 'load-balancer' | 'image';

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Who is calling (from the token) and what was asked. */
export interface Ctx {
  service: ServiceName;
  method: string;
  /** Path below the service prefix and version, e.g. "/routers/abc". */
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  headers: IncomingMessage['headers'];
  /** Base URL of this emulator, for links. */
  baseUrl: string;
  projectId: string;
  userId: string;
  isAdmin: boolean;
  /** Nova microversion as [major, minor]. */
  microversion: [number, number];
}

export type Handler = (ctx: Ctx) => Reply | Promise<Reply>;

interface Route {
  method: string;
  parts: string[];
  handler: Handler;
}

export class RouteTable {
  readonly #routes: Route[] = [];

  add(method: string, pattern: string, handler: Handler): this {
    this.#routes.push({ method, parts: pattern.split('/').filter(Boolean), handler });
    return this;
  }

  /** The handler and path params, 'method' when only the method is wrong, undefined when nothing matches. */
  match(method: string, path: string): { handler: Handler; params: Record<string, string> } | 'method' | undefined {
    const segs = path.split('/').filter(Boolean);
    let methodOnly = false;
    for (const r of this.#routes) {
      const params = matchParts(r.parts, segs);
      if (!params) continue;
      if (r.method === method) return { handler: r.handler, params };
      methodOnly = true;
    }
    return methodOnly ? 'method' : undefined;
  }
}

function matchParts(parts: string[], segs: string[]): Record<string, string> | undefined {
  if (parts.length !== segs.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    const s = decodeURIComponent(segs[i]!);
    if (p.startsWith(':')) params[p.slice(1)] = s;
    else if (p !== s) return undefined;
  }
  return params;
}

/** Thrown by handlers; turned into the service's error body. */
export class ApiFault extends Error {
  readonly status: number;
  readonly type: string;

  constructor(status: number, type: string, message: string) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

const NOVA_FAULTS: Record<number, string> = {
  400: 'badRequest',
  403: 'forbidden',
  404: 'itemNotFound',
  409: 'conflictingRequest',
  413: 'overLimit',
  500: 'computeFault',
  503: 'serviceUnavailable',
};
const KEYSTONE_TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};
const NEUTRON_TYPES: Record<number, string> = {
  400: 'HTTPBadRequest',
  404: 'HTTPNotFound',
  409: 'HTTPConflict',
  500: 'HTTPInternalServerError',
  503: 'HTTPServiceUnavailable',
};

/** The body a service sends for an error; type falls back to the service's name for the status. */
export function errorBody(service: ServiceName, status: number, message: string, type?: string): unknown {
  switch (service) {
    case 'network':
      return { NeutronError: { type: type ?? NEUTRON_TYPES[status] ?? 'HTTPError', message, detail: '' } };
    case 'identity':
      return { error: { code: status, message, title: type ?? KEYSTONE_TITLES[status] ?? 'Error' } };
    case 'load-balancer':
      return { faultcode: type ?? (status < 500 ? 'Client' : 'Server'), faultstring: message, debuginfo: null };
    default:
      return { [type ?? NOVA_FAULTS[status] ?? 'computeFault']: { code: status, message } };
  }
}

/** keystonemiddleware answers a missing or bad token the same way for every service: Keystone's shape. */
export function unauthorized(baseUrl: string): Reply {
  return {
    status: 401,
    body: errorBody('identity', 401, 'The request you have made requires authentication.'),
    headers: { 'www-authenticate': `Keystone uri="${baseUrl}/identity/v3"` },
  };
}

export function ok(body: unknown, status = 200, headers?: Record<string, string>): Reply {
  return { status, body, headers };
}

export function noContent(status = 204): Reply {
  return { status };
}

/** An object body with the expected wrapper key, or a 400 in the service's words. */
export function wrapped(ctx: Ctx, key: string): Record<string, unknown> {
  const b = ctx.body as Record<string, unknown> | undefined;
  const inner = b?.[key];
  if (!inner || typeof inner !== 'object' || Array.isArray(inner)) {
    throw new ApiFault(400, ctx.service === 'network' ? 'HTTPBadRequest' : 'badRequest', `Unable to find '${key}' in request body`);
  }
  return inner as Record<string, unknown>;
}

export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function isoMicros(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000');
}
