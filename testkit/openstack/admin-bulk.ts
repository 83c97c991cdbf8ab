// Bulk set-up for benchmarks: one admin request creates N projects, each with its own user, network,
// subnet, router (routes to its servers), security group (pod-CIDR rules) and ACTIVE servers. The
// records go straight into the store, so a thousand tenants take milliseconds instead of ten
// thousand API calls through Keystone, Neutron and Nova.
import { ApiFault } from './http-kit.ts';
import type { EmulatorStore, RouteRec, RuleRec, SgRec } from './emulator-store.ts';
import { defaultPools, formatCidr, parseCidr } from './ip-math.ts';
import { createPortRec, stamps } from './neutron-common.ts';

export interface BulkProjectsSpec {
  /** Projects to create, 1..5000. */
  count: number;
  /** Name of project i (and of its user) is `${prefix}-${i}`; [a-z0-9-], 1..40 characters. */
  prefix: string;
  /** Index of the first project (a second batch continues the numbering); default 0. */
  start?: number;
  /** Servers per project, 0..50; default 3. */
  servers?: number;
  /** Server name; {project} and {n} are replaced; default "{project}-server-{n}". */
  serverName?: string;
  /** Metadata on every server ({project} replaced in values). */
  serverMetadata?: Record<string, string>;
  /** Tags on every server ({project} replaced). */
  serverTags?: string[];
  /**
   * The pod CIDR of every project's cluster (an IPv4 /8../22); the router gets one /24 route of it per
   * server (next hop: that server) and the security group ingress rules for tcp, udp and icmp from it.
   * Default 100.100.0.0/16.
   */
  clusterCidr?: string;
  /** Extra routes per router whose next hop is no server (orphans for routegc); default 0. */
  orphanRoutes?: number;
}

export interface BulkServer {
  id: string;
  name: string;
  ip: string;
}
export interface BulkProject {
  index: number;
  projectId: string;
  projectName: string;
  userName: string;
  password: string;
  networkId: string;
  subnetId: string;
  subnetCidr: string;
  routerId: string;
  securityGroupId: string;
  securityGroupName: string;
  servers: BulkServer[];
  routes: RouteRec[];
}

const MAX_COUNT = 5000;
const NAME = /^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/;
const bad = (message: string) => new ApiFault(400, 'BadRequest', message);

/** Validates a request body (throws a 400 ApiFault naming the field) and fills in defaults. */
export function parseBulkSpec(body: unknown): Required<BulkProjectsSpec> {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const int = (key: string, min: number, max: number, dflt?: number): number => {
    const v = b[key] ?? dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw bad(`${key} must be a whole number from ${min} to ${max}`);
    return v;
  };
  const count = int('count', 1, MAX_COUNT);
  if (typeof b.prefix !== 'string' || !NAME.test(b.prefix))
    throw bad('prefix must be 1-40 characters of a-z, 0-9 and "-", starting and ending with a letter or digit');
  const start = int('start', 0, 65_535 - count + 1, 0);
  const servers = int('servers', 0, 50, 3);
  const orphanRoutes = int('orphanRoutes', 0, 20, 0);
  const serverName = b.serverName ?? '{project}-server-{n}';
  if (typeof serverName !== 'string' || !serverName.includes('{n}') || !/^[A-Za-z0-9{}._-]{1,200}$/.test(serverName)) {
    throw bad('serverName must contain {n} and only letters, digits, ".", "_", "-", {project} and {n}');
  }
  const meta = b.serverMetadata ?? {};
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta) || Object.values(meta).some((v) => typeof v !== 'string'))
    throw bad('serverMetadata must map names to strings');
  const tags = b.serverTags ?? [];
  if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string' || t === '' || t.length > 60))
    throw bad('serverTags must be a list of 1-60 character strings');
  const clusterCidr = b.clusterCidr ?? '100.100.0.0/16';
  const c = typeof clusterCidr === 'string' ? parseCidr(clusterCidr) : undefined;
  if (!c || c.family !== 4 || c.prefix < 8 || c.prefix > 22 || formatCidr(c) !== clusterCidr)
    throw bad('clusterCidr must be an IPv4 network from /8 to /22 written in canonical form, e.g. 100.100.0.0/16');
  if (servers + orphanRoutes > 2 ** (24 - c.prefix)) throw bad(`clusterCidr ${clusterCidr} has fewer /24s than servers + orphanRoutes`);
  return {
    count,
    prefix: b.prefix,
    start,
    servers,
    serverName,
    serverMetadata: meta as Record<string, string>,
    serverTags: tags as string[],
    clusterCidr,
    orphanRoutes,
  };
}

/** Creates the projects of a validated spec; refuses (409) when a project name is taken. */
export function createProjectsInBulk(store: EmulatorStore, spec: Required<BulkProjectsSpec>): BulkProject[] {
  const names = new Set([...store.projects.values()].map((p) => p.name));
  for (let i = spec.start; i < spec.start + spec.count; i++) {
    if (names.has(`${spec.prefix}-${i}`)) throw new ApiFault(409, 'Conflict', `project ${spec.prefix}-${i} exists already`);
  }
  const member = [...store.roles.values()].find((r) => r.name === 'member');
  if (!member) throw new ApiFault(500, 'InternalError', 'the emulator has no member role');
  const out: BulkProject[] = [];
  for (let i = spec.start; i < spec.start + spec.count; i++) out.push(createOne(store, spec, i, member.id));
  return out;
}

function createOne(store: EmulatorStore, spec: Required<BulkProjectsSpec>, i: number, memberRoleId: string): BulkProject {
  const name = `${spec.prefix}-${i}`;
  const projectId = store.newId().replaceAll('-', '');
  store.projects.set(projectId, { id: projectId, name, domain_id: 'default', description: 'bulk', enabled: true });
  const userId = store.newId().replaceAll('-', '');
  const password = store.newSecret();
  store.users.set(userId, { id: userId, name, domain_id: 'default', password, default_project_id: projectId, enabled: true });
  store.assignments.push({ userId, projectId, roleId: memberRoleId });

  // 10.<hi>.<lo>.0/24 per project: no two projects share an address.
  const subnetCidr = `10.${i >> 8}.${i & 255}.0/24`;
  const gatewayIp = `10.${i >> 8}.${i & 255}.1`;
  const net = { ...stamps(store, projectId), name: `${name}-net`, external: false, port_security_enabled: true, mtu: 1450 };
  store.networks.set(net.id, net);
  const subnet = {
    ...stamps(store, projectId),
    name: `${name}-subnet`,
    network_id: net.id,
    cidr: subnetCidr,
    ip_version: 4 as const,
    gateway_ip: gatewayIp,
    allocation_pools: defaultPools(parseCidr(subnetCidr)!, gatewayIp),
  };
  store.subnets.set(subnet.id, subnet);

  const sg: SgRec = { ...stamps(store, projectId), name: `${name}-sg`, description: 'bulk', stateful: true };
  store.securityGroups.set(sg.id, sg);
  for (const protocol of ['tcp', 'udp', 'icmp']) {
    const rule: RuleRec = {
      ...stamps(store, projectId),
      security_group_id: sg.id,
      direction: 'ingress',
      ethertype: 'IPv4',
      protocol,
      port_range_min: null,
      port_range_max: null,
      remote_ip_prefix: spec.clusterCidr,
      normalized_cidr: spec.clusterCidr,
      remote_group_id: null,
      description: 'bulk: pod traffic',
    };
    store.rules.set(rule.id, rule);
  }

  const fill = (s: string, n?: number) => s.replaceAll('{project}', name).replaceAll('{n}', String(n ?? ''));
  const cidr = parseCidr(spec.clusterCidr)!;
  const podCidr = (k: number) => formatCidr({ ...cidr, base: cidr.base + (BigInt(k) << 8n), prefix: 24 });
  const now = store.clock.now();
  const servers: BulkServer[] = [];
  const routes: RouteRec[] = [];
  for (let n = 0; n < spec.servers; n++) {
    const ip = `10.${i >> 8}.${i & 255}.${10 + n}`;
    const id = store.newId();
    store.servers.set(id, {
      id,
      name: fill(spec.serverName, n),
      project_id: projectId,
      user_id: userId,
      flavorId: '1',
      imageId: [...store.images.keys()][0] ?? '',
      status: 'ACTIVE',
      vm_state: 'active',
      task_state: null,
      power_state: 1,
      created: now,
      updated: now,
      metadata: Object.fromEntries(Object.entries(spec.serverMetadata).map(([k, v]) => [k, fill(v)])),
      tags: spec.serverTags.map((t) => fill(t)),
      host: 'emu-compute',
      key_name: null,
    });
    createPortRec(store, {
      projectId,
      networkId: net.id,
      fixedIps: [{ subnet_id: subnet.id, ip_address: ip }],
      deviceId: id,
      deviceOwner: 'compute:nova',
      host: 'emu-compute',
      securityGroups: [sg.id],
    });
    servers.push({ id, name: fill(spec.serverName, n), ip });
    routes.push({ destination: podCidr(n), nexthop: ip });
  }
  for (let k = 0; k < spec.orphanRoutes; k++) routes.push({ destination: podCidr(spec.servers + k), nexthop: `10.${i >> 8}.${i & 255}.${250 - k}` });
  const router = {
    ...stamps(store, projectId),
    name: `${name}-router`,
    routes: routes.map((r) => ({ ...r })),
    admin_state_up: true,
    external_gateway_info: null,
    description: 'bulk',
  };
  store.routers.set(router.id, router);
  createPortRec(store, {
    projectId,
    networkId: net.id,
    fixedIps: [{ subnet_id: subnet.id, ip_address: subnet.gateway_ip }],
    deviceId: router.id,
    deviceOwner: 'network:router_interface',
  });

  return {
    index: i,
    projectId,
    projectName: name,
    userName: name,
    password,
    networkId: net.id,
    subnetId: subnet.id,
    subnetCidr,
    routerId: router.id,
    securityGroupId: sg.id,
    securityGroupName: sg.name,
    servers,
    routes,
  };
}
