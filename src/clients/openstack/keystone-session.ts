// Keystone v3 tokens: one authentication in flight at a time, the token cached and renewed before it
// expires, dropped on a 401 so the next call authenticates again. The token and password stay here.
import type { CloudAuth, CloudConfig } from './cloud-config.ts';
import type { TokenInfo } from './openstack-client.ts';
import type { CatalogEntry } from './openstack-types.ts';
import { OpenStackError, codeForStatus, parseFault } from './openstack-error.ts';
import { catalogOffers, findEndpoint, keptCatalog, type ServiceType } from './service-catalog.ts';
import { sendWithRetries, type SenderDeps } from './http-sender.ts';

export interface SessionToken {
  /** The X-Subject-Token value: goes into X-Auth-Token headers and nowhere else. */
  value: string;
  info: TokenInfo;
  issuedAtMs: number;
  /** What the whole catalog offered (info.catalog keeps only this client's interface and region), for errors. */
  offered?: string;
}

/** The auth request body for a cloud's credentials (POST /v3/auth/tokens). Pure. */
export function buildAuthBody(auth: CloudAuth): unknown {
  const domain = (id?: string, name?: string) => (id ? { id } : name ? { name } : undefined);
  const user = auth.userId ? { id: auth.userId } : auth.username ? { name: auth.username, domain: domain(auth.userDomainId, auth.userDomainName) } : undefined;
  if (auth.type === 'applicationCredential') {
    const cred = auth.id ? { id: auth.id, secret: auth.secret } : { name: auth.name, secret: auth.secret, user };
    return { auth: { identity: { methods: ['application_credential'], application_credential: cred } } };
  }
  const identity = { methods: ['password'], password: { user: { ...user, password: auth.password } } };
  let scope: unknown;
  if (auth.projectId) scope = { project: { id: auth.projectId } };
  else if (auth.projectName) scope = { project: { name: auth.projectName, domain: domain(auth.projectDomainId, auth.projectDomainName) } };
  else if (auth.domainId || auth.domainName) scope = { domain: domain(auth.domainId, auth.domainName) };
  return { auth: scope ? { identity, scope } : { identity } };
}

/** Renew once less than renewBeforeMs (at most half the token's lifetime) is left. Pure. */
export function needsRenewal(
  nowMs: number,
  token: Pick<SessionToken, 'issuedAtMs'> & { info: Pick<TokenInfo, 'expiresAtMs'> },
  renewBeforeMs: number,
): boolean {
  const lifetime = token.info.expiresAtMs - token.issuedAtMs;
  return nowMs >= token.info.expiresAtMs - Math.min(renewBeforeMs, lifetime / 2);
}

interface TokenBody {
  token?: {
    expires_at?: string;
    user?: { id?: string };
    project?: { id?: string; name?: string };
    roles?: { name?: string }[];
    catalog?: CatalogEntry[];
  };
}

export interface KeystoneSessionOptions {
  config: CloudConfig;
  deps: SenderDeps;
  /** Default 5 minutes. */
  renewBeforeMs?: number;
  /** Keeps one copy of catalog strings that recur across sessions (base/intern.ts); default: none kept. */
  intern?: (s: string) => string;
}

export class KeystoneSession {
  readonly #opts: KeystoneSessionOptions;
  #token: SessionToken | undefined;
  #pending: Promise<SessionToken> | undefined;

  constructor(opts: KeystoneSessionOptions) {
    this.#opts = opts;
  }

  /** The identity endpoint (the auth URL with /v3). */
  get identityUrl(): string {
    const url = this.#opts.config.authUrl;
    return /\/v3$/.test(url) ? url : `${url}/v3`;
  }

  /** A valid token: the cached one, or a new one when none is cached or it is about to expire. */
  async token(signal?: AbortSignal): Promise<SessionToken> {
    const t = this.#token;
    if (t && !needsRenewal(this.#opts.deps.clock.now(), t, this.#opts.renewBeforeMs ?? 300_000)) return t;
    // Shared by every caller, so one caller's abort must not fail the others: each only stops waiting.
    this.#pending ??= this.#authenticate().finally(() => {
      this.#pending = undefined;
    });
    return signal ? untilAborted(this.#pending, signal) : this.#pending;
  }

  /** Forgets the token if it is still the one a service rejected (a newer one is kept). */
  invalidate(rejected?: string): void {
    if (rejected === undefined || this.#token?.value === rejected) this.#token = undefined;
  }

  async endpoint(service: ServiceType, signal?: AbortSignal): Promise<string> {
    if (service === 'identity') return this.identityUrl;
    const t = await this.token(signal);
    return findEndpoint(t.info.catalog, { service, interface: this.#opts.config.interface, region: this.#opts.config.regionName }, t.offered);
  }

  async #authenticate(): Promise<SessionToken> {
    const { deps, config } = this.#opts;
    const url = new URL(`${this.identityUrl}/auth/tokens`);
    const res = await sendWithRetries(deps, {
      service: 'keystone',
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(buildAuthBody(config.auth)),
      idempotent: true,
    });
    const value = res.headers.get('x-subject-token');
    if (res.status !== 201 || !value) {
      const fault = parseFault(res.text);
      throw new OpenStackError(codeForStatus(res.status), {
        service: 'keystone',
        method: 'POST',
        path: url.pathname,
        status: res.status,
        faultType: fault.type,
        faultMessage: `authentication as cloud "${config.cloudName}" failed${fault.message ? `: ${fault.message}` : ''}`,
        requestId: res.requestId,
        attempts: res.attempts,
      });
    }
    const body = JSON.parse(res.text) as TokenBody;
    const tok = body.token ?? {};
    const issuedAtMs = deps.clock.now();
    const intern = this.#opts.intern ?? ((s: string) => s);
    const fullCatalog = (tok.catalog ?? []).map((e) => ({ ...e, endpoints: e.endpoints ?? [] }));
    const expiresAtMs = tok.expires_at ? Date.parse(tok.expires_at) : issuedAtMs + 3_600_000;
    const token: SessionToken = {
      value,
      issuedAtMs,
      info: {
        userId: tok.user?.id ?? '',
        projectId: tok.project?.id ?? '',
        projectName: tok.project?.name,
        roles: (tok.roles ?? []).map((r) => r.name ?? ''),
        expiresAtMs,
        catalog: keptCatalog(fullCatalog, { interface: config.interface, region: config.regionName }, intern),
      },
      offered: intern(catalogOffers(fullCatalog)),
    };
    deps.log.debug({ service: 'keystone', cloud: config.cloudName, projectId: token.info.projectId, expiresAt: tok.expires_at }, 'openstack token issued');
    this.#token = token;
    return token;
  }
}

function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
