// Neutron (network) calls: routers and their extra routes, ports, security groups, floating IPs.
import type { CallOptions, DeleteOutcome, NeutronApi, UpdateRoutesOptions } from './openstack-client.ts';
import type {
  ExtraRoute,
  FloatingIp,
  FloatingIpListFilter,
  NeutronExtension,
  Port,
  PortListFilter,
  PortUpdate,
  Router,
  SecurityGroup,
  SecurityGroupRule,
  SecurityGroupRuleCreate,
} from './openstack-types.ts';
import type { OpenStackHttp } from './openstack-http.ts';

const enc = encodeURIComponent;

export class NeutronClient implements NeutronApi {
  readonly #http: OpenStackHttp;

  constructor(http: OpenStackHttp) {
    this.#http = http;
  }

  async getRouter(id: string, opts: CallOptions = {}): Promise<Router | undefined> {
    return this.#http.objectOrAbsent<Router>('network', { method: 'GET', path: `/routers/${enc(id)}`, signal: opts.signal }, 'router');
  }

  async updateRoutes(id: string, routes: ExtraRoute[], opts: UpdateRoutesOptions = {}): Promise<Router> {
    // The revision-if-match extension: the update applies only if nobody changed the router since we read it.
    const headers = opts.ifRevision !== undefined ? { 'if-match': `revision_number=${opts.ifRevision}` } : undefined;
    const res = await this.#http.request<{ router: Router }>('network', {
      method: 'PUT',
      path: `/routers/${enc(id)}`,
      body: { router: { routes: routes.map(plainRoute) } },
      headers,
      // A full list from an earlier read: sent once. The route writer reads again and decides.
      idempotent: false,
      signal: opts.signal,
    });
    return res.body.router;
  }

  addExtraRoutes(id: string, routes: ExtraRoute[], opts: CallOptions = {}): Promise<Router> {
    return this.#extraRoutes(id, 'add_extraroutes', routes, opts);
  }

  removeExtraRoutes(id: string, routes: ExtraRoute[], opts: CallOptions = {}): Promise<Router> {
    return this.#extraRoutes(id, 'remove_extraroutes', routes, opts);
  }

  async listExtensions(opts: CallOptions = {}): Promise<NeutronExtension[]> {
    return this.#http.array<NeutronExtension>('network', { method: 'GET', path: '/extensions', signal: opts.signal }, 'extensions');
  }

  listPorts(f: PortListFilter = {}, opts: CallOptions = {}): Promise<Port[]> {
    const query = {
      network_id: f.networkId,
      device_id: f.deviceId,
      device_owner: f.deviceOwner,
      fixed_ips: f.fixedIp !== undefined ? `ip_address=${f.fixedIp}` : undefined,
      project_id: f.projectId,
    };
    return this.#http.listAll<Port>('network', '/ports', 'ports', query, { signal: opts.signal });
  }

  async getPort(id: string, opts: CallOptions = {}): Promise<Port | undefined> {
    return this.#http.objectOrAbsent<Port>('network', { method: 'GET', path: `/ports/${enc(id)}`, signal: opts.signal }, 'port');
  }

  async updatePort(id: string, update: PortUpdate, opts: CallOptions = {}): Promise<Port> {
    const res = await this.#http.request<{ port: Port }>('network', { method: 'PUT', path: `/ports/${enc(id)}`, body: { port: update }, signal: opts.signal });
    return res.body.port;
  }

  listSecurityGroups(f: { name?: string; projectId?: string } = {}, opts: CallOptions = {}): Promise<SecurityGroup[]> {
    return this.#http.listAll<SecurityGroup>(
      'network',
      '/security-groups',
      'security_groups',
      { name: f.name, project_id: f.projectId },
      { signal: opts.signal },
    );
  }

  async getSecurityGroup(id: string, opts: CallOptions = {}): Promise<SecurityGroup | undefined> {
    return this.#http.objectOrAbsent<SecurityGroup>('network', { method: 'GET', path: `/security-groups/${enc(id)}`, signal: opts.signal }, 'security_group');
  }

  async createSecurityGroupRule(rule: SecurityGroupRuleCreate, opts: CallOptions = {}): Promise<SecurityGroupRule> {
    // Not retried after a timeout: if the first one landed, the second answers 409 SecurityGroupRuleExists,
    // which the caller can treat as success.
    const res = await this.#http.request<{ security_group_rule: SecurityGroupRule }>('network', {
      method: 'POST',
      path: '/security-group-rules',
      body: { security_group_rule: rule },
      signal: opts.signal,
    });
    return res.body.security_group_rule;
  }

  deleteSecurityGroupRule(id: string, opts: CallOptions = {}): Promise<DeleteOutcome> {
    return this.#delete(`/security-group-rules/${enc(id)}`, opts);
  }

  listFloatingIps(f: FloatingIpListFilter = {}, opts: CallOptions = {}): Promise<FloatingIp[]> {
    const query = { port_id: f.portId, project_id: f.projectId, floating_ip_address: f.floatingIpAddress };
    return this.#http.listAll<FloatingIp>('network', '/floatingips', 'floatingips', query, { signal: opts.signal });
  }

  deleteFloatingIp(id: string, opts: CallOptions = {}): Promise<DeleteOutcome> {
    return this.#delete(`/floatingips/${enc(id)}`, opts);
  }

  async #extraRoutes(id: string, action: string, routes: ExtraRoute[], opts: CallOptions): Promise<Router> {
    // Idempotent by design (adding a present route or removing an absent one is a no-op), so PUT retries are safe.
    const res = await this.#http.request<{ router: Router }>('network', {
      method: 'PUT',
      path: `/routers/${enc(id)}/${action}`,
      body: { router: { routes: routes.map(plainRoute) } },
      signal: opts.signal,
    });
    return res.body.router;
  }

  async #delete(path: string, opts: CallOptions): Promise<DeleteOutcome> {
    const res = await this.#http.requestOrAbsent('network', { method: 'DELETE', path, signal: opts.signal });
    return res ? 'deleted' : 'absent';
  }
}

/** Neutron rejects any key besides destination and nexthop, so extra fields callers carry are dropped. */
function plainRoute(r: ExtraRoute): ExtraRoute {
  return { destination: r.destination, nexthop: r.nexthop };
}
