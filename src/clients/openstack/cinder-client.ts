// Cinder v3 (block storage) calls: volumes listed across pages, read and deleted.
import type { CallOptions, CinderApi, DeleteOutcome } from './openstack-client.ts';
import type { Volume, VolumeListFilter } from './openstack-types.ts';
import type { OpenStackHttp } from './openstack-http.ts';

const enc = encodeURIComponent;

export class CinderClient implements CinderApi {
  readonly #http: OpenStackHttp;
  readonly #pageSize: number | undefined;

  constructor(http: OpenStackHttp, pageSize?: number) {
    this.#http = http;
    this.#pageSize = pageSize;
  }

  listVolumes(f: VolumeListFilter = {}, opts: CallOptions = {}): Promise<Volume[]> {
    // Cinder ignores project_id unless all_tenants is set (and the caller is admin).
    const query = { all_tenants: f.projectId ? 1 : undefined, project_id: f.projectId, status: f.status, name: f.name };
    return this.#http.listAll<Volume>('block-storage', '/volumes/detail', 'volumes', query, { pageSize: this.#pageSize, signal: opts.signal });
  }

  async getVolume(id: string, opts: CallOptions = {}): Promise<Volume | undefined> {
    return this.#http.objectOrAbsent<Volume>('block-storage', { method: 'GET', path: `/volumes/${enc(id)}`, signal: opts.signal }, 'volume');
  }

  async deleteVolume(id: string, opts: CallOptions = {}): Promise<DeleteOutcome> {
    const res = await this.#http.requestOrAbsent('block-storage', { method: 'DELETE', path: `/volumes/${enc(id)}`, signal: opts.signal });
    return res ? 'deleted' : 'absent';
  }
}
