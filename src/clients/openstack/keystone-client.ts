// Keystone v3 calls beyond authentication: who we are, and the role assignments flight repairs.
import type { CallOptions, KeystoneApi, TokenInfo } from './openstack-client.ts';
import type { Domain, Role, User } from './openstack-types.ts';
import type { OpenStackHttp } from './openstack-http.ts';
import type { KeystoneSession } from './keystone-session.ts';

const enc = encodeURIComponent;

export class KeystoneClient implements KeystoneApi {
  readonly #http: OpenStackHttp;
  readonly #session: KeystoneSession;

  constructor(http: OpenStackHttp, session: KeystoneSession) {
    this.#http = http;
    this.#session = session;
  }

  async tokenInfo(opts: CallOptions = {}): Promise<TokenInfo> {
    return (await this.#session.token(opts.signal)).info;
  }

  async findDomain(name: string, opts: CallOptions = {}): Promise<Domain | undefined> {
    return (await this.#http.array<Domain>('identity', { method: 'GET', path: '/domains', query: { name }, signal: opts.signal }, 'domains'))[0];
  }

  async findUser(name: string, domainId: string, opts: CallOptions = {}): Promise<User | undefined> {
    return (await this.#http.array<User>('identity', { method: 'GET', path: '/users', query: { name, domain_id: domainId }, signal: opts.signal }, 'users'))[0];
  }

  async listRoles(opts: CallOptions = {}): Promise<Role[]> {
    return this.#http.array<Role>('identity', { method: 'GET', path: '/roles', signal: opts.signal }, 'roles');
  }

  async listProjectUserRoles(projectId: string, userId: string, opts: CallOptions = {}): Promise<Role[]> {
    const path = `/projects/${enc(projectId)}/users/${enc(userId)}/roles`;
    return this.#http.array<Role>('identity', { method: 'GET', path, signal: opts.signal }, 'roles');
  }

  async assignProjectUserRole(projectId: string, userId: string, roleId: string, opts: CallOptions = {}): Promise<void> {
    const path = `/projects/${enc(projectId)}/users/${enc(userId)}/roles/${enc(roleId)}`;
    await this.#http.request('identity', { method: 'PUT', path, signal: opts.signal });
  }
}
