// Shared pieces of the emulated Neutron: visibility by project, views with standard attributes,
// generic list filters and paging, ports with address allocation, the per-project default group.
import { ApiFault, isoSeconds, type Ctx } from './http-kit.ts';
import { cidrContains, freeAddresses, parseCidr } from './ip-math.ts';
import type { EmulatorStore, PortRec, SgRec } from './emulator-store.ts';

type Obj = Record<string, unknown>;

/** Admin sees every project's objects in Neutron; others see only their own (and get 404, not 403). */
export function visible(ctx: Ctx, rec: { project_id: string }): boolean {
  return ctx.isAdmin || rec.project_id === ctx.projectId;
}

export function mustGet<T extends { project_id: string }>(ctx: Ctx, map: Map<string, T>, id: string, type: string, message: string): T {
  const rec = map.get(id);
  if (!rec || !visible(ctx, rec)) throw new ApiFault(404, type, message);
  return rec;
}

export function stamps(
  store: EmulatorStore,
  projectId: string,
): { id: string; project_id: string; created_at: number; updated_at: number; revision_number: number } {
  const now = store.clock.now();
  return { id: store.newId(), project_id: projectId, created_at: now, updated_at: now, revision_number: 1 };
}

/** Neutron bumps revision_number (and updated_at) on every change to an object. */
export function bump(store: EmulatorStore, rec: { revision_number: number; updated_at: number }): void {
  rec.revision_number++;
  rec.updated_at = store.clock.now();
}

export function standardView(rec: { id: string; project_id: string; created_at: number; updated_at: number; revision_number: number }): Obj {
  return {
    id: rec.id,
    project_id: rec.project_id,
    tenant_id: rec.project_id,
    created_at: isoSeconds(rec.created_at),
    updated_at: isoSeconds(rec.updated_at),
    revision_number: rec.revision_number,
    tags: [],
  };
}

const NON_FILTERS = new Set(['limit', 'marker', 'fields', 'sort_key', 'sort_dir', 'page_reverse']);

/** Neutron list semantics: field filters (repeatable), `fields=` selection, limit/marker paging with links. */
export function listReply(ctx: Ctx, key: string, items: Obj[], path: string): Obj {
  let out = items.filter((item) =>
    [...new Set(ctx.query.keys())]
      .filter((k) => !NON_FILTERS.has(k))
      .every((k) => {
        const wanted = ctx.query.getAll(k);
        if (k === 'fixed_ips') return wanted.every((w) => matchesFixedIp(item, w));
        return k in item && wanted.includes(String(item[k]));
      }),
  );
  const limit = Number(ctx.query.get('limit') ?? 0);
  const body: Obj = {};
  if (limit > 0) {
    out = out.sort((a, b) => String(a.id).localeCompare(String(b.id)));
    const marker = ctx.query.get('marker');
    if (marker) out = out.filter((i) => String(i.id) > marker);
    const page = out.slice(0, limit);
    const links: Obj[] = [];
    if (page.length === limit) {
      const q = new URLSearchParams(ctx.query);
      q.set('marker', String(page.at(-1)!.id));
      links.push({ rel: 'next', href: `${ctx.baseUrl}/network/v2.0${path}?${q}` });
    }
    body[`${key}_links`] = links;
    out = page;
  }
  const fields = ctx.query.getAll('fields');
  body[key] = fields.length ? out.map((i) => Object.fromEntries(fields.filter((f) => f in i).map((f) => [f, i[f]]))) : out;
  return body;
}

function matchesFixedIp(item: Obj, filter: string): boolean {
  const [k, v] = filter.split('=');
  const ips = (item.fixed_ips ?? []) as Obj[];
  return ips.some((ip) => k !== undefined && String(ip[k]) === v);
}

/** The project's "default" group, created on first use with Neutron's four default rules. */
export function ensureDefaultGroup(store: EmulatorStore, projectId: string): SgRec {
  const found = [...store.securityGroups.values()].find((g) => g.project_id === projectId && g.name === 'default');
  if (found) return found;
  const sg: SgRec = { ...stamps(store, projectId), name: 'default', description: 'Default security group', stateful: true };
  store.securityGroups.set(sg.id, sg);
  for (const ethertype of ['IPv4', 'IPv6'] as const) {
    addRule(store, sg, { direction: 'egress', ethertype });
    addRule(store, sg, { direction: 'ingress', ethertype, remote_group_id: sg.id });
  }
  return sg;
}

export function addRule(store: EmulatorStore, sg: SgRec, r: { direction: 'ingress' | 'egress'; ethertype: 'IPv4' | 'IPv6'; remote_group_id?: string }): void {
  const rule = {
    ...stamps(store, sg.project_id),
    security_group_id: sg.id,
    direction: r.direction,
    ethertype: r.ethertype,
    protocol: null,
    port_range_min: null,
    port_range_max: null,
    remote_ip_prefix: null,
    normalized_cidr: null,
    remote_group_id: r.remote_group_id ?? null,
    description: '',
    revision_number: 0,
  };
  store.rules.set(rule.id, rule);
}

export function randomMac(): string {
  const b = () =>
    Math.floor(Math.random() * 256)
      .toString(16)
      .padStart(2, '0');
  return `fa:16:3e:${b()}:${b()}:${b()}`;
}

/** How many free addresses Neutron's IPAM draws from at random (MAX_WIN in its neutrondb_ipam driver). */
const ALLOCATION_WINDOW = 1000;

/**
 * A free address from the subnet's pools, or a 409 like Neutron's IpAddressGenerationFailure. Like
 * Neutron's IPAM, the address is drawn at random from the first free ones, not taken in order: a test
 * that takes an address of no port for granted meets the same collisions here as on a real cloud.
 */
export function allocateIp(store: EmulatorStore, subnetId: string): string {
  const subnet = store.subnets.get(subnetId)!;
  const used = new Set([...store.ports.values()].flatMap((p) => p.fixed_ips.filter((f) => f.subnet_id === subnetId).map((f) => f.ip_address)));
  if (subnet.gateway_ip) used.add(subnet.gateway_ip);
  const free = freeAddresses(subnet.allocation_pools, used, ALLOCATION_WINDOW);
  if (free.length === 0) throw new ApiFault(409, 'IpAddressGenerationFailure', `No more IP addresses available on network ${subnet.network_id}.`);
  return free[Math.floor(Math.random() * free.length)]!;
}

export interface NewPort {
  projectId: string;
  networkId: string;
  name?: string;
  fixedIps?: { subnet_id?: string; ip_address?: string }[];
  deviceId?: string;
  deviceOwner?: string;
  securityGroups?: string[];
  host?: string;
}

export function createPortRec(store: EmulatorStore, p: NewPort): PortRec {
  const net = store.networks.get(p.networkId)!;
  const subnets = [...store.subnets.values()].filter((s) => s.network_id === p.networkId);
  const fixed = (p.fixedIps ?? (subnets[0] ? [{ subnet_id: subnets[0].id }] : [])).map((f) => {
    const subnet = f.subnet_id ? store.subnets.get(f.subnet_id) : subnets.find((s) => f.ip_address && cidrContains(parseCidr(s.cidr)!, f.ip_address));
    if (!subnet || subnet.network_id !== p.networkId)
      throw new ApiFault(
        400,
        'InvalidInput',
        `Invalid input for operation: Failed to create port on network ${p.networkId}, because fixed_ips included invalid subnet ${f.subnet_id ?? ''}.`,
      );
    return { subnet_id: subnet.id, ip_address: f.ip_address ?? allocateIp(store, subnet.id) };
  });
  const secured = net.port_security_enabled;
  const isDevicePort = (p.deviceOwner ?? '').startsWith('network:');
  const port: PortRec = {
    ...stamps(store, p.projectId),
    name: p.name ?? '',
    network_id: p.networkId,
    mac_address: randomMac(),
    fixed_ips: fixed,
    allowed_address_pairs: [],
    security_groups: isDevicePort || !secured ? [] : (p.securityGroups ?? [ensureDefaultGroup(store, p.projectId).id]),
    port_security_enabled: secured,
    device_id: p.deviceId ?? '',
    device_owner: p.deviceOwner ?? '',
    status: 'DOWN',
    host: p.host ?? '',
  };
  store.ports.set(port.id, port);
  return port;
}

export function portView(p: PortRec): Obj {
  return {
    ...standardView(p),
    name: p.name,
    network_id: p.network_id,
    admin_state_up: true,
    mac_address: p.mac_address,
    fixed_ips: p.fixed_ips,
    allowed_address_pairs: [...p.allowed_address_pairs].sort((a, b) => a.ip_address.localeCompare(b.ip_address)),
    security_groups: p.security_groups,
    port_security_enabled: p.port_security_enabled,
    device_id: p.device_id,
    device_owner: p.device_owner,
    status: p.status,
    description: '',
    extra_dhcp_opts: [],
    'binding:host_id': p.host,
    'binding:vif_type': p.host ? 'ovs' : 'unbound',
    'binding:vnic_type': 'normal',
  };
}
