// An OpenStack API emulator on one HTTP port: Keystone, Nova, Neutron, Cinder, Octavia and a little Glance
// under /identity, /compute, /network, /volume, /load-balancer and /image, plus /_admin for tests.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../src/base/clock.ts';
import { ApiFault, RouteTable, errorBody, ok, unauthorized, type Ctx, type Reply, type ServiceName } from './http-kit.ts';
import { DEFAULT_TIMINGS, EmulatorStore, type DelayRule, type EmulatorTimings } from './emulator-store.ts';
import { FaultInjector, type FaultSpec, type FaultRule } from './fault-injector.ts';
import { keystoneRoutes, seedIdentity } from './keystone-api.ts';
import { NOVA_MAX_MICROVERSION, novaRoutes } from './nova-api.ts';
import { NEUTRON_EXTENSIONS, neutronRoutes } from './neutron-api.ts';
import { cinderRoutes } from './cinder-api.ts';
import { octaviaRoutes } from './octavia-api.ts';
import { VERSION_SEGMENTS, versionDoc } from './version-docs.ts';
import { adminRoutes } from './admin-api.ts';
import { applyConcurrentRouteWrite } from './neutron-routers.ts';

export interface EmulatorOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Drives token expiry and delayed state changes; a ManualClock makes 30 s deletes instant to test. */
  clock?: Clock;
  timings?: Partial<EmulatorTimings>;
  /** Neutron max_routes; 30 like upstream. */
  maxRoutes?: number;
  maxAddressPairs?: number;
  /** Largest page Nova, Cinder and Octavia return (osapi_max_limit); 1000 like upstream. */
  maxPageSize?: number;
  /** Neutron extension aliases to advertise (default NEUTRON_EXTENSIONS); revision-if-match and extraroute-atomic change behaviour. */
  neutronExtensions?: readonly string[];
  /**
   * Called for every logged request with the project of its token (undefined for token requests and
   * unknown tokens) and the wall-clock time; benchmarks count per project here, past the log's cap.
   */
  onRequest?: (entry: RequestLogEntry, meta: { projectId?: string; atMs: number }) => void;
}

export interface RequestLogEntry {
  service: string;
  method: string;
  path: string;
  status: number | 'hang';
  requestId: string;
  /** The If-Match header, when the request had one (revision-guarded writes). */
  ifMatch?: string;
}

const SERVICES = new Set<ServiceName>(['identity', 'compute', 'network', 'volume', 'load-balancer', 'image']);
const MAX_LOG = 5000;

export class OpenStackEmulator {
  readonly store: EmulatorStore;
  readonly faults = new FaultInjector();
  requests: RequestLogEntry[] = [];
  readonly #opts: EmulatorOptions;
  readonly #tables: Record<ServiceName, RouteTable>;
  readonly #admin: RouteTable;
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  #port = 0;

  constructor(opts: EmulatorOptions = {}) {
    this.#opts = opts;
    this.store = new EmulatorStore(
      opts.clock ?? systemClock,
      { ...DEFAULT_TIMINGS, ...opts.timings },
      {
        maxRoutes: opts.maxRoutes ?? 30,
        maxAddressPairs: opts.maxAddressPairs ?? 10,
        maxPageSize: opts.maxPageSize ?? 1000,
      },
    );
    for (const alias of opts.neutronExtensions ?? NEUTRON_EXTENSIONS) this.store.neutronExtensions.add(alias);
    seedIdentity(this.store);
    this.store.flavors.set('1', { id: '1', name: 'it.tiny', vcpus: 1, ram: 64, disk: 1 });
    this.store.images.set('00000000-0000-4000-8000-000000000001', { id: '00000000-0000-4000-8000-000000000001', name: 'it-image', status: 'active' });
    const glance = new RouteTable().add('GET', '/images', (ctx) =>
      ok({ images: [...this.store.images.values()].filter((i) => !ctx.query.get('name') || i.name === ctx.query.get('name')) }),
    );
    this.#tables = {
      identity: keystoneRoutes(this.store),
      compute: novaRoutes(this.store),
      network: neutronRoutes(this.store),
      volume: cinderRoutes(this.store),
      'load-balancer': octaviaRoutes(this.store),
      image: glance,
    };
    this.#admin = adminRoutes(this);
  }

  get clock(): Clock {
    return this.store.clock;
  }

  get port(): number {
    return this.#port;
  }

  /** http://host:port, the base of every URL in the catalog. */
  get url(): string {
    return `http://${this.#opts.host ?? '127.0.0.1'}:${this.#port}`;
  }

  get authUrl(): string {
    return `${this.url}/identity/v3`;
  }

  async start(): Promise<void> {
    if (this.#server) return;
    const server = createServer((req, res) => void this.#handle(req, res));
    server.on('connection', (s: Socket) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#opts.port ?? 0, this.#opts.host ?? '127.0.0.1', () => resolve());
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  /** Stops listening and cuts every connection, hung ones included. Idempotent. */
  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = undefined;
    const closed = new Promise<void>((r) => server.close(() => r()));
    for (const s of this.#sockets) s.destroy();
    await closed;
  }

  addFault(spec: FaultSpec): FaultRule {
    return this.faults.add(spec);
  }

  addDelay(rule: DelayRule): void {
    this.store.delayRules.push(rule);
  }

  clearDelays(): void {
    this.store.delayRules = [];
  }

  /** Every issued token stops working at once, as after a Keystone key rotation; clients see 401. */
  revokeTokens(): void {
    this.store.tokens.clear();
  }

  /** A clouds.yaml document for this emulator (the seeded users: admin/admin and demo/demo). */
  cloudsYaml(cloudName = 'emulator', user: 'admin' | 'demo' = 'admin'): string {
    return [
      'clouds:',
      `  ${cloudName}:`,
      '    auth:',
      `      auth_url: ${this.authUrl}`,
      `      username: ${user}`,
      `      password: ${user}`,
      `      project_name: ${user}`,
      '      user_domain_name: Default',
      '      project_domain_name: Default',
      '    region_name: RegionOne',
      '    interface: public',
      '    identity_api_version: 3',
      '',
    ].join('\n');
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const segs = url.pathname.split('/').filter(Boolean);
    const requestId = `req-${randomUUID()}`;
    const first = segs[0] ?? '';
    const service = SERVICES.has(first as ServiceName) ? (first as ServiceName) : undefined;
    let body: unknown;
    try {
      body = await readJson(req);
    } catch {
      return this.#send(res, service ?? 'network', req.method ?? 'GET', url.pathname, requestId, {
        status: 400,
        body: errorBody(service ?? 'network', 400, 'Malformed JSON in request body.'),
      });
    }
    if (first === '_admin') {
      const reply = await this.#route(
        this.#admin,
        { ...baseCtx(req, url, this.url), service: 'network', path: '/' + segs.slice(1).join('/'), body },
        'network',
      );
      return this.#send(res, 'admin', req.method ?? 'GET', url.pathname, requestId, reply, false);
    }
    if (!service) return this.#send(res, 'unknown', req.method ?? 'GET', url.pathname, requestId, { status: 404, body: { error: 'no such service' } });
    const hasVersion = VERSION_SEGMENTS[service].includes(segs[1] ?? '');
    const rest = '/' + segs.slice(hasVersion ? 2 : 1).join('/');
    const method = req.method ?? 'GET';
    const projectId = this.#opts.onRequest ? this.store.tokens.get(String(req.headers['x-auth-token'] ?? ''))?.projectId : undefined;
    const fault = this.faults.take(service, method, rest);
    if (fault?.latencyMs) await new Promise((r) => setTimeout(r, fault.latencyMs));
    if (fault?.hang) {
      this.#log({ service, method, path: url.pathname + url.search, status: 'hang', requestId }, projectId);
      return;
    }
    if (fault?.body !== undefined) {
      res.writeHead(fault.status ?? 200, {
        'x-openstack-request-id': requestId,
        'content-type': fault.contentType ?? 'application/json',
        'content-length': String(Buffer.byteLength(fault.body)),
      });
      res.end(fault.body);
      this.#log({ service, method, path: url.pathname + url.search, status: fault.status ?? 200, requestId });
      return;
    }
    if (fault?.status) {
      return this.#send(
        res,
        service,
        method,
        url.pathname + url.search,
        requestId,
        { status: fault.status, body: errorBody(service, fault.status, fault.message ?? `Injected fault (${fault.id})`, fault.type) },
        true,
        undefined,
        projectId,
      );
    }
    const reply = await this.#serviceReply(req, url, service, hasVersion, rest, body);
    const ifMatch = typeof req.headers['if-match'] === 'string' ? req.headers['if-match'] : undefined;
    this.#send(res, service, method, url.pathname + url.search, requestId, reply, true, ifMatch, projectId);
    // In the same turn as the answer: the client cannot get another request in before this write.
    if (fault?.routeWriteAfter) applyConcurrentRouteWrite(this.store, fault.routeWriteAfter);
  }

  async #serviceReply(req: IncomingMessage, url: URL, service: ServiceName, hasVersion: boolean, rest: string, body: unknown): Promise<Reply> {
    if (method(req) === 'GET' && rest === '/' && !(service === 'volume' && hasVersion)) {
      return ok(versionDoc(service, this.url, hasVersion ? 'v' : undefined), hasVersion || service === 'network' || service === 'compute' ? 200 : 300);
    }
    if (!hasVersion) return { status: 404, body: errorBody(service, 404, 'The resource could not be found.') };
    const ctx: Ctx = { ...baseCtx(req, url, this.url), service, path: rest, body };
    const isTokenCall = service === 'identity' && rest === '/auth/tokens';
    if (!(isTokenCall && method(req) === 'POST')) {
      const tok = this.store.tokens.get(String(req.headers['x-auth-token'] ?? ''));
      if (!tok || tok.expiresAtMs <= this.store.clock.now()) return unauthorized(this.url);
      const roles = this.store.roleNames(tok.roleIds);
      Object.assign(ctx, { projectId: tok.projectId, userId: tok.userId, isAdmin: roles.includes('admin') });
    }
    if (service === 'compute') {
      const mv = parseMicroversion(req);
      if (mv === 'invalid') return { status: 400, body: errorBody(service, 400, 'Invalid format for API version.') };
      if (mv[0] !== 2 || mv[1] > NOVA_MAX_MICROVERSION[1]) {
        return {
          status: 406,
          body: errorBody(
            service,
            406,
            `Version ${mv.join('.')} is not supported by the API. Minimum is 2.1 and maximum is ${NOVA_MAX_MICROVERSION.join('.')}.`,
            'computeFault',
          ),
        };
      }
      ctx.microversion = mv;
    }
    this.store.tick();
    const reply = await this.#route(this.#tables[service], ctx, service);
    if (service === 'compute') {
      const v = ctx.microversion.join('.');
      reply.headers = {
        ...reply.headers,
        'openstack-api-version': `compute ${v}`,
        'x-openstack-nova-api-version': v,
        vary: 'OpenStack-API-Version, X-OpenStack-Nova-API-Version',
      };
    }
    return reply;
  }

  async #route(table: RouteTable, ctx: Ctx, service: ServiceName): Promise<Reply> {
    const m = table.match(ctx.method, ctx.path);
    if (m === undefined) return { status: 404, body: errorBody(service, 404, 'The resource could not be found.') };
    if (m === 'method') return { status: 405, body: errorBody(service, 405, 'The method is not allowed for the requested URL.') };
    try {
      return await m.handler({ ...ctx, params: m.params });
    } catch (err) {
      if (err instanceof ApiFault) return { status: err.status, body: errorBody(service, err.status, err.message, err.type) };
      return { status: 500, body: errorBody(service, 500, `emulator error: ${(err as Error).message}`) };
    }
  }

  #send(
    res: ServerResponse,
    service: string,
    method: string,
    path: string,
    requestId: string,
    reply: Reply,
    logIt = true,
    ifMatch?: string,
    projectId?: string,
  ): void {
    const headers: Record<string, string> = { 'x-openstack-request-id': requestId, ...reply.headers };
    if (service === 'compute') headers['x-compute-request-id'] = requestId;
    const text = reply.body === undefined ? '' : JSON.stringify(reply.body);
    if (text) headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(text));
    res.writeHead(reply.status, headers);
    res.end(text);
    if (logIt) this.#log({ service, method, path, status: reply.status, requestId, ...(ifMatch !== undefined ? { ifMatch } : {}) }, projectId);
  }

  #log(entry: RequestLogEntry, projectId?: string): void {
    this.#opts.onRequest?.(entry, { projectId, atMs: Date.now() });
    this.requests.push(entry);
    if (this.requests.length > MAX_LOG) this.requests.splice(0, this.requests.length - MAX_LOG);
  }
}

function method(req: IncomingMessage): string {
  return req.method ?? 'GET';
}

function baseCtx(req: IncomingMessage, url: URL, baseUrl: string): Omit<Ctx, 'service' | 'path' | 'body'> {
  return {
    method: method(req),
    params: {},
    query: url.searchParams,
    headers: req.headers,
    baseUrl,
    projectId: '',
    userId: '',
    isAdmin: false,
    microversion: [2, 1],
  };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text.trim() === '' ? undefined : JSON.parse(text);
}

/** Reads OpenStack-API-Version (or the legacy Nova header); absent means 2.1, "latest" the maximum. */
export function parseMicroversion(req: IncomingMessage): [number, number] | 'invalid' {
  const modern = String(req.headers['openstack-api-version'] ?? '');
  const m = /compute\s+(\S+)/i.exec(modern);
  const raw = m?.[1] ?? (req.headers['x-openstack-nova-api-version'] as string | undefined);
  if (!raw) return [2, 1];
  if (raw === 'latest') return NOVA_MAX_MICROVERSION;
  const v = /^(\d+)\.(\d+)$/.exec(raw);
  return v ? [Number(v[1]), Number(v[2])] : 'invalid';
}
