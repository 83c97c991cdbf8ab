// The ports controllers depend on: one interface per OpenStack service, so tests can fake any of them.
import type {
  CatalogEntry,
  Domain,
  ExtraRoute,
  FloatingIp,
  FloatingIpListFilter,
  LoadBalancer,
  LoadBalancerListFilter,
  NeutronExtension,
  Port,
  PortListFilter,
  PortUpdate,
  RebootType,
  Role,
  Router,
  SecurityGroup,
  SecurityGroupRule,
  SecurityGroupRuleCreate,
  Server,
  ServerListFilter,
  User,
  Volume,
  VolumeListFilter,
} from './openstack-types.ts';

/** Every call takes an optional signal; aborting it stops waiting, retrying and backing off. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** What a delete found: the object was there and is being deleted, or it was already gone (404). */
export type DeleteOutcome = 'deleted' | 'absent';

/** Who the client is authenticated as (from the current Keystone token). */
export interface TokenInfo {
  userId: string;
  projectId: string;
  projectName?: string;
  roles: string[];
  expiresAtMs: number;
  catalog: CatalogEntry[];
}

export interface KeystoneApi {
  /** Authenticates if needed; never exposes the token itself. */
  tokenInfo(opts?: CallOptions): Promise<TokenInfo>;
  findDomain(name: string, opts?: CallOptions): Promise<Domain | undefined>;
  findUser(name: string, domainId: string, opts?: CallOptions): Promise<User | undefined>;
  listRoles(opts?: CallOptions): Promise<Role[]>;
  listProjectUserRoles(projectId: string, userId: string, opts?: CallOptions): Promise<Role[]>;
  assignProjectUserRole(projectId: string, userId: string, roleId: string, opts?: CallOptions): Promise<void>;
}

export interface NovaApi {
  /** GET /servers/detail with filters, every page. */
  listServers(filter?: ServerListFilter, opts?: CallOptions): Promise<Server[]>;
  /** undefined when Nova answers 404. */
  getServer(id: string, opts?: CallOptions): Promise<Server | undefined>;
  reboot(id: string, type: RebootType, opts?: CallOptions): Promise<void>;
  deleteServer(id: string, opts?: CallOptions): Promise<DeleteOutcome>;
  /** Nova action addSecurityGroup, by group name (Nova applies it to every port of the server). */
  addSecurityGroup(id: string, groupName: string, opts?: CallOptions): Promise<void>;
  listTags(id: string, opts?: CallOptions): Promise<string[]>;
  addTag(id: string, tag: string, opts?: CallOptions): Promise<void>;
  deleteTag(id: string, tag: string, opts?: CallOptions): Promise<void>;
  getMetadata(id: string, opts?: CallOptions): Promise<Record<string, string>>;
  /** POST /servers/{id}/metadata: sets the given keys, keeps the others; returns the whole map. */
  mergeMetadata(id: string, metadata: Record<string, string>, opts?: CallOptions): Promise<Record<string, string>>;
}

/** Options for a full-list route update. */
export interface UpdateRoutesOptions extends CallOptions {
  /** Sends `If-Match: revision_number=N`; Neutron answers 412 (E_CONFLICT) when the router moved on. */
  ifRevision?: number;
}

export interface NeutronApi {
  getRouter(id: string, opts?: CallOptions): Promise<Router | undefined>;
  /** PUT /routers/{id} with the whole route list (replaces it). */
  updateRoutes(id: string, routes: ExtraRoute[], opts?: UpdateRoutesOptions): Promise<Router>;
  /** extraroute-atomic: adds routes that are not there yet, all or nothing; returns the router. */
  addExtraRoutes(id: string, routes: ExtraRoute[], opts?: CallOptions): Promise<Router>;
  /** extraroute-atomic: removes the given routes; absent ones are ignored. */
  removeExtraRoutes(id: string, routes: ExtraRoute[], opts?: CallOptions): Promise<Router>;
  listExtensions(opts?: CallOptions): Promise<NeutronExtension[]>;
  listPorts(filter?: PortListFilter, opts?: CallOptions): Promise<Port[]>;
  getPort(id: string, opts?: CallOptions): Promise<Port | undefined>;
  updatePort(id: string, update: PortUpdate, opts?: CallOptions): Promise<Port>;
  listSecurityGroups(filter?: { name?: string; projectId?: string }, opts?: CallOptions): Promise<SecurityGroup[]>;
  getSecurityGroup(id: string, opts?: CallOptions): Promise<SecurityGroup | undefined>;
  createSecurityGroupRule(rule: SecurityGroupRuleCreate, opts?: CallOptions): Promise<SecurityGroupRule>;
  deleteSecurityGroupRule(id: string, opts?: CallOptions): Promise<DeleteOutcome>;
  listFloatingIps(filter?: FloatingIpListFilter, opts?: CallOptions): Promise<FloatingIp[]>;
  deleteFloatingIp(id: string, opts?: CallOptions): Promise<DeleteOutcome>;
}

export interface CinderApi {
  /** GET /volumes/detail, every page. */
  listVolumes(filter?: VolumeListFilter, opts?: CallOptions): Promise<Volume[]>;
  getVolume(id: string, opts?: CallOptions): Promise<Volume | undefined>;
  deleteVolume(id: string, opts?: CallOptions): Promise<DeleteOutcome>;
}

export interface OctaviaApi {
  listLoadBalancers(filter?: LoadBalancerListFilter, opts?: CallOptions): Promise<LoadBalancer[]>;
  getLoadBalancer(id: string, opts?: CallOptions): Promise<LoadBalancer | undefined>;
  /** cascade also deletes listeners, pools and members (otherwise Octavia refuses an LB with children). */
  deleteLoadBalancer(id: string, opts?: CallOptions & { cascade?: boolean }): Promise<DeleteOutcome>;
}

/** One authenticated project scope with a client per service. */
export interface OpenStackClient {
  readonly keystone: KeystoneApi;
  readonly nova: NovaApi;
  readonly neutron: NeutronApi;
  readonly cinder: CinderApi;
  readonly octavia: OctaviaApi;
  /** Drops the cached token; the next call authenticates again. */
  invalidateToken(): void;
  /** Drops the token; every later call fails with E_CLOSED naming `reason` (its credentials were replaced). */
  close?(reason: string): void;
}
