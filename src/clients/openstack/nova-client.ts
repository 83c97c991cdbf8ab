// Nova (compute) calls the controllers make: servers, reboot, delete, security groups, tags, metadata.
import type { CallOptions, DeleteOutcome, NovaApi } from './openstack-client.ts';
import type { RebootType, Server, ServerListFilter } from './openstack-types.ts';
import type { OpenStackHttp, Query } from './openstack-http.ts';

const enc = encodeURIComponent;

export function serverListQuery(f: ServerListFilter = {}): Query {
  return {
    name: f.name,
    status: f.status,
    tags: f.tags?.join(','),
    'tags-any': f.tagsAny?.join(','),
    all_tenants: f.allTenants ? 'true' : undefined,
    project_id: f.projectId,
  };
}

export class NovaClient implements NovaApi {
  readonly #http: OpenStackHttp;
  readonly #pageSize: number | undefined;

  constructor(http: OpenStackHttp, pageSize?: number) {
    this.#http = http;
    this.#pageSize = pageSize;
  }

  listServers(filter?: ServerListFilter, opts: CallOptions = {}): Promise<Server[]> {
    return this.#http.listAll<Server>('compute', '/servers/detail', 'servers', serverListQuery(filter), { pageSize: this.#pageSize, signal: opts.signal });
  }

  async getServer(id: string, opts: CallOptions = {}): Promise<Server | undefined> {
    return this.#http.objectOrAbsent<Server>('compute', { method: 'GET', path: `/servers/${enc(id)}`, signal: opts.signal }, 'server');
  }

  async reboot(id: string, type: RebootType, opts: CallOptions = {}): Promise<void> {
    // Not retried: a reboot that timed out may have started, and a second SOFT one answers 409.
    await this.#action(id, { reboot: { type } }, false, opts);
  }

  async deleteServer(id: string, opts: CallOptions = {}): Promise<DeleteOutcome> {
    const res = await this.#http.requestOrAbsent('compute', { method: 'DELETE', path: `/servers/${enc(id)}`, signal: opts.signal });
    return res ? 'deleted' : 'absent';
  }

  async addSecurityGroup(id: string, groupName: string, opts: CallOptions = {}): Promise<void> {
    await this.#action(id, { addSecurityGroup: { name: groupName } }, true, opts);
  }

  async listTags(id: string, opts: CallOptions = {}): Promise<string[]> {
    return this.#http.array<string>('compute', { method: 'GET', path: `/servers/${enc(id)}/tags`, signal: opts.signal }, 'tags');
  }

  async addTag(id: string, tag: string, opts: CallOptions = {}): Promise<void> {
    await this.#http.request('compute', { method: 'PUT', path: `/servers/${enc(id)}/tags/${enc(tag)}`, signal: opts.signal });
  }

  async deleteTag(id: string, tag: string, opts: CallOptions = {}): Promise<void> {
    await this.#http.request('compute', { method: 'DELETE', path: `/servers/${enc(id)}/tags/${enc(tag)}`, signal: opts.signal });
  }

  async getMetadata(id: string, opts: CallOptions = {}): Promise<Record<string, string>> {
    return this.#http.object<Record<string, string>>('compute', { method: 'GET', path: `/servers/${enc(id)}/metadata`, signal: opts.signal }, 'metadata');
  }

  async mergeMetadata(id: string, metadata: Record<string, string>, opts: CallOptions = {}): Promise<Record<string, string>> {
    const res = await this.#http.request<{ metadata: Record<string, string> }>('compute', {
      method: 'POST',
      path: `/servers/${enc(id)}/metadata`,
      body: { metadata },
      idempotent: true,
      signal: opts.signal,
    });
    return res.body.metadata;
  }

  async #action(id: string, body: unknown, idempotent: boolean, opts: CallOptions): Promise<void> {
    await this.#http.request('compute', { method: 'POST', path: `/servers/${enc(id)}/action`, body, idempotent, signal: opts.signal });
  }
}
