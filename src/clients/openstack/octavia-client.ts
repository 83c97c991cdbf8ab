// Octavia (load-balancer) calls: load balancers listed, read and deleted (with cascade).
import type { CallOptions, DeleteOutcome, OctaviaApi } from './openstack-client.ts';
import type { LoadBalancer, LoadBalancerListFilter } from './openstack-types.ts';
import type { OpenStackHttp } from './openstack-http.ts';

const enc = encodeURIComponent;

export class OctaviaClient implements OctaviaApi {
  readonly #http: OpenStackHttp;

  constructor(http: OpenStackHttp) {
    this.#http = http;
  }

  listLoadBalancers(f: LoadBalancerListFilter = {}, opts: CallOptions = {}): Promise<LoadBalancer[]> {
    const query = { name: f.name, project_id: f.projectId, vip_address: f.vipAddress };
    return this.#http.listAll<LoadBalancer>('load-balancer', '/lbaas/loadbalancers', 'loadbalancers', query, { signal: opts.signal });
  }

  async getLoadBalancer(id: string, opts: CallOptions = {}): Promise<LoadBalancer | undefined> {
    return this.#http.objectOrAbsent<LoadBalancer>(
      'load-balancer',
      { method: 'GET', path: `/lbaas/loadbalancers/${enc(id)}`, signal: opts.signal },
      'loadbalancer',
    );
  }

  async deleteLoadBalancer(id: string, opts: CallOptions & { cascade?: boolean } = {}): Promise<DeleteOutcome> {
    const res = await this.#http.requestOrAbsent('load-balancer', {
      method: 'DELETE',
      path: `/lbaas/loadbalancers/${enc(id)}`,
      query: { cascade: opts.cascade ? 'true' : undefined },
      signal: opts.signal,
    });
    return res ? 'deleted' : 'absent';
  }
}
