// Emulated Neutron v2.0: networks, subnets, ports with allowed_address_pairs and port security,
// security groups and rules, floating IPs, the extension list; routers live in neutron-routers.ts.
import { isIP } from 'node:net';
import { ApiFault, RouteTable, noContent, ok, wrapped, type Ctx } from './http-kit.ts';
import { checkPools, cidrContains, defaultPools, formatCidr, parseCidr, type AddressRange, type Cidr } from './ip-math.ts';
import { addRule, createPortRec, ensureDefaultGroup, listReply, mustGet, portView, standardView, stamps, visible, bump } from './neutron-common.ts';
import { checkIfMatch, routerRoutes } from './neutron-routers.ts';
import type { EmulatorStore, FipRec, NetworkRec, PortRec, RuleRec, SgRec, SubnetRec } from './emulator-store.ts';

type Obj = Record<string, unknown>;

export const NEUTRON_EXTENSIONS = [
  'router',
  'extraroute',
  'extraroute-atomic',
  'allowed-address-pairs',
  'port-security',
  'security-group',
  'revision-if-match',
  'standard-attr-revisions',
  'standard-attr-timestamp',
  'standard-attr-description',
  'external-net',
  'binding',
  'project-id',
  'quotas',
  'pagination',
  'sorting',
  'stateful-security-group',
];

const netView = (store: EmulatorStore, n: NetworkRec): Obj => ({
  ...standardView(n),
  name: n.name,
  status: 'ACTIVE',
  admin_state_up: true,
  shared: false,
  'router:external': n.external,
  mtu: n.mtu,
  port_security_enabled: n.port_security_enabled,
  subnets: [...store.subnets.values()].filter((s) => s.network_id === n.id).map((s) => s.id),
  description: '',
});
const subnetView = (s: SubnetRec): Obj => ({
  ...standardView(s),
  name: s.name,
  network_id: s.network_id,
  cidr: s.cidr,
  ip_version: s.ip_version,
  gateway_ip: s.gateway_ip,
  enable_dhcp: true,
  allocation_pools: s.allocation_pools,
  host_routes: [],
  dns_nameservers: [],
  description: '',
});
const sgView = (store: EmulatorStore, g: SgRec): Obj => ({
  ...standardView(g),
  name: g.name,
  description: g.description,
  stateful: g.stateful,
  security_group_rules: [...store.rules.values()].filter((r) => r.security_group_id === g.id).map(ruleView),
});
const ruleView = (r: RuleRec): Obj => ({
  ...standardView(r),
  security_group_id: r.security_group_id,
  direction: r.direction,
  ethertype: r.ethertype,
  protocol: r.protocol,
  port_range_min: r.port_range_min,
  port_range_max: r.port_range_max,
  remote_ip_prefix: r.remote_ip_prefix,
  normalized_cidr: r.normalized_cidr,
  remote_group_id: r.remote_group_id,
  remote_address_group_id: null,
  description: r.description,
});
const fipView = (f: FipRec): Obj => ({
  ...standardView(f),
  floating_ip_address: f.floating_ip_address,
  floating_network_id: f.floating_network_id,
  port_id: f.port_id,
  fixed_ip_address: f.fixed_ip_address,
  router_id: f.router_id,
  status: f.port_id ? 'ACTIVE' : 'DOWN',
  description: f.description,
  port_details: null,
});

export function neutronRoutes(store: EmulatorStore): RouteTable {
  const t = new RouteTable();
  t.add('GET', '/extensions', () =>
    ok({
      extensions: [...store.neutronExtensions].map((alias) => ({ alias, name: alias, description: alias, updated: '2013-01-20T00:00:00-00:00', links: [] })),
    }),
  );
  t.add('GET', '/extensions/:alias', (ctx) => {
    if (!store.neutronExtensions.has(ctx.params.alias!)) throw new ApiFault(404, 'HTTPNotFound', `Extension with alias ${ctx.params.alias} does not exist`);
    return ok({ extension: { alias: ctx.params.alias, name: ctx.params.alias, description: '', links: [] } });
  });
  networkRoutes(store, t);
  portRoutes(store, t);
  securityGroupRoutes(store, t);
  floatingIpRoutes(store, t);
  routerRoutes(store, t);
  return t;
}

function networkRoutes(store: EmulatorStore, t: RouteTable): void {
  t.add('GET', '/networks', (ctx) =>
    ok(
      listReply(
        ctx,
        'networks',
        [...store.networks.values()].filter((n) => visible(ctx, n) || n.external).map((n) => netView(store, n)),
        '/networks',
      ),
    ),
  );
  t.add('POST', '/networks', (ctx) => {
    const b = wrapped(ctx, 'network');
    const n: NetworkRec = {
      ...stamps(store, String(b.project_id ?? ctx.projectId)),
      name: String(b.name ?? ''),
      external: b['router:external'] === true,
      port_security_enabled: b.port_security_enabled !== false,
      mtu: 1450,
    };
    store.networks.set(n.id, n);
    return ok({ network: netView(store, n) }, 201);
  });
  t.add('GET', '/networks/:id', (ctx) =>
    ok({ network: netView(store, mustGet(ctx, store.networks, ctx.params.id!, 'NetworkNotFound', `Network ${ctx.params.id} could not be found.`)) }),
  );
  t.add('DELETE', '/networks/:id', (ctx) => {
    const n = mustGet(ctx, store.networks, ctx.params.id!, 'NetworkNotFound', `Network ${ctx.params.id} could not be found.`);
    if ([...store.ports.values()].some((p) => p.network_id === n.id))
      throw new ApiFault(409, 'NetworkInUse', `Unable to complete operation on network ${n.id}. There are one or more ports still in use on the network.`);
    for (const s of store.subnets.values()) if (s.network_id === n.id) store.subnets.delete(s.id);
    store.networks.delete(n.id);
    return noContent();
  });
  t.add('GET', '/subnets', (ctx) => ok(listReply(ctx, 'subnets', [...store.subnets.values()].filter((s) => visible(ctx, s)).map(subnetView), '/subnets')));
  t.add('POST', '/subnets', (ctx) => {
    const b = wrapped(ctx, 'subnet');
    const net = mustGet(ctx, store.networks, String(b.network_id), 'NetworkNotFound', `Network ${String(b.network_id)} could not be found.`);
    const c = parseCidr(String(b.cidr));
    if (!c) throw new ApiFault(400, 'HTTPBadRequest', `Invalid input for cidr. Reason: '${String(b.cidr)}' is not a valid IP subnet.`);
    const gateway =
      b.gateway_ip === null
        ? null
        : typeof b.gateway_ip === 'string'
          ? b.gateway_ip
          : formatCidr({ ...c, base: c.base + 1n, prefix: c.family === 4 ? 32 : 128 }).split('/')[0]!;
    const s: SubnetRec = {
      ...stamps(store, net.project_id),
      name: String(b.name ?? ''),
      network_id: net.id,
      cidr: formatCidr(c),
      ip_version: c.family,
      gateway_ip: gateway,
      allocation_pools: allocationPools(b.allocation_pools, c, gateway),
    };
    store.subnets.set(s.id, s);
    return ok({ subnet: subnetView(s) }, 201);
  });
  t.add('GET', '/subnets/:id', (ctx) =>
    ok({ subnet: subnetView(mustGet(ctx, store.subnets, ctx.params.id!, 'SubnetNotFound', `Subnet ${ctx.params.id} could not be found.`)) }),
  );
  t.add('DELETE', '/subnets/:id', (ctx) => {
    const s = mustGet(ctx, store.subnets, ctx.params.id!, 'SubnetNotFound', `Subnet ${ctx.params.id} could not be found.`);
    if ([...store.ports.values()].some((p) => p.fixed_ips.some((f) => f.subnet_id === s.id)))
      throw new ApiFault(409, 'SubnetInUse', `Unable to complete operation on subnet ${s.id}: One or more ports have an IP allocation from this subnet.`);
    store.subnets.delete(s.id);
    return noContent();
  });
}

/** Validates allowed_address_pairs like Neutron: limit, syntax, duplicates; fills in the port's MAC. */
function addressPairs(store: EmulatorStore, port: { mac_address: string }, raw: unknown): PortRec['allowed_address_pairs'] {
  const list = Array.isArray(raw) ? (raw as Obj[]) : [];
  if (list.length > store.limits.maxAddressPairs)
    throw new ApiFault(400, 'AllowedAddressPairExhausted', `The number of allowed address pair exceeds the maximum ${store.limits.maxAddressPairs}.`);
  const out: PortRec['allowed_address_pairs'] = [];
  for (const p of list) {
    const ip = String(p.ip_address ?? '');
    if (!parseCidr(ip)) throw new ApiFault(400, 'HTTPBadRequest', `Invalid input for allowed_address_pairs. Reason: '${ip}' is not a valid IP address.`);
    if (list.filter((q) => q.ip_address === p.ip_address && q.mac_address === p.mac_address).length > 1) {
      throw new ApiFault(
        400,
        'DuplicateAddressPairInRequest',
        `Request contains duplicate address pair: mac_address ${p.mac_address ?? 'None'} ip_address ${ip}.`,
      );
    }
    out.push({ ip_address: ip, mac_address: typeof p.mac_address === 'string' ? p.mac_address : port.mac_address });
  }
  return out;
}

function applyPortUpdate(store: EmulatorStore, ctx: Ctx, port: PortRec, b: Obj): void {
  const security = typeof b.port_security_enabled === 'boolean' ? b.port_security_enabled : port.port_security_enabled;
  const pairs = 'allowed_address_pairs' in b ? addressPairs(store, port, b.allowed_address_pairs) : port.allowed_address_pairs;
  const groups = Array.isArray(b.security_groups) ? (b.security_groups as string[]) : port.security_groups;
  if (!security && pairs.length)
    throw new ApiFault(409, 'AddressPairAndPortSecurityRequired', 'Port Security must be enabled in order to have allowed address pairs on a port.');
  if (!security && groups.length)
    throw new ApiFault(
      409,
      'PortSecurityAndIPRequiredForSecurityGroups',
      'Port security must be enabled and port must have an IP address in order to use security groups.',
    );
  for (const g of groups) mustGet(ctx, store.securityGroups, g, 'SecurityGroupNotFound', `Security group ${g} does not exist`);
  port.port_security_enabled = security;
  port.allowed_address_pairs = pairs;
  port.security_groups = [...new Set(groups)];
  if (typeof b.name === 'string') port.name = b.name;
  bump(store, port);
}

function portRoutes(store: EmulatorStore, t: RouteTable): void {
  const get = (ctx: Ctx) => mustGet(ctx, store.ports, ctx.params.id!, 'PortNotFound', `Port ${ctx.params.id} could not be found.`);
  t.add('GET', '/ports', (ctx) => ok(listReply(ctx, 'ports', [...store.ports.values()].filter((p) => visible(ctx, p)).map(portView), '/ports')));
  t.add('GET', '/ports/:id', (ctx) => ok({ port: portView(get(ctx)) }));
  t.add('POST', '/ports', (ctx) => {
    const b = wrapped(ctx, 'port');
    const net = mustGet(ctx, store.networks, String(b.network_id), 'NetworkNotFound', `Network ${String(b.network_id)} could not be found.`);
    const port = createPortRec(store, {
      projectId: String(b.project_id ?? ctx.projectId),
      networkId: net.id,
      name: typeof b.name === 'string' ? b.name : '',
      fixedIps: Array.isArray(b.fixed_ips) ? (b.fixed_ips as { subnet_id?: string; ip_address?: string }[]) : undefined,
      deviceId: typeof b.device_id === 'string' ? b.device_id : '',
      deviceOwner: typeof b.device_owner === 'string' ? b.device_owner : '',
      securityGroups: Array.isArray(b.security_groups) ? (b.security_groups as string[]) : undefined,
    });
    try {
      applyPortUpdate(store, ctx, port, b);
    } catch (err) {
      store.ports.delete(port.id);
      throw err;
    }
    port.revision_number = 1;
    return ok({ port: portView(port) }, 201);
  });
  t.add('PUT', '/ports/:id', (ctx) => {
    const port = get(ctx);
    checkIfMatch(store, ctx, port);
    applyPortUpdate(store, ctx, port, wrapped(ctx, 'port'));
    return ok({ port: portView(port) });
  });
  t.add('DELETE', '/ports/:id', (ctx) => {
    const port = get(ctx);
    store.ports.delete(port.id);
    for (const f of store.floatingIps.values()) if (f.port_id === port.id) Object.assign(f, { port_id: null, fixed_ip_address: null, router_id: null });
    return noContent();
  });
}

function securityGroupRoutes(store: EmulatorStore, t: RouteTable): void {
  const getSg = (ctx: Ctx, id: string) => mustGet(ctx, store.securityGroups, id, 'SecurityGroupNotFound', `Security group ${id} does not exist`);
  t.add('GET', '/security-groups', (ctx) => {
    ensureDefaultGroup(store, ctx.projectId);
    return ok(
      listReply(
        ctx,
        'security_groups',
        [...store.securityGroups.values()].filter((g) => visible(ctx, g)).map((g) => sgView(store, g)),
        '/security-groups',
      ),
    );
  });
  t.add('GET', '/security-groups/:id', (ctx) => ok({ security_group: sgView(store, getSg(ctx, ctx.params.id!)) }));
  t.add('POST', '/security-groups', (ctx) => {
    const b = wrapped(ctx, 'security_group');
    ensureDefaultGroup(store, ctx.projectId);
    const g: SgRec = {
      ...stamps(store, String(b.project_id ?? ctx.projectId)),
      name: String(b.name ?? ''),
      description: String(b.description ?? ''),
      stateful: b.stateful !== false,
    };
    store.securityGroups.set(g.id, g);
    for (const ethertype of ['IPv4', 'IPv6'] as const) addRule(store, g, { direction: 'egress', ethertype });
    g.revision_number = 1;
    return ok({ security_group: sgView(store, g) }, 201);
  });
  t.add('DELETE', '/security-groups/:id', (ctx) => {
    const g = getSg(ctx, ctx.params.id!);
    if ([...store.ports.values()].some((p) => p.security_groups.includes(g.id)))
      throw new ApiFault(409, 'SecurityGroupInUse', `Security Group ${g.id} in use.`);
    if (g.name === 'default') throw new ApiFault(409, 'SecurityGroupCannotRemoveDefault', 'Insufficient rights for removing default security group.');
    for (const r of store.rules.values()) if (r.security_group_id === g.id) store.rules.delete(r.id);
    store.securityGroups.delete(g.id);
    return noContent();
  });
  t.add('GET', '/security-group-rules', (ctx) =>
    ok(listReply(ctx, 'security_group_rules', [...store.rules.values()].filter((r) => visible(ctx, r)).map(ruleView), '/security-group-rules')),
  );
  t.add('GET', '/security-group-rules/:id', (ctx) =>
    ok({
      security_group_rule: ruleView(
        mustGet(ctx, store.rules, ctx.params.id!, 'SecurityGroupRuleNotFound', `Security group rule ${ctx.params.id} does not exist`),
      ),
    }),
  );
  t.add('POST', '/security-group-rules', (ctx) => ok({ security_group_rule: ruleView(createRule(store, ctx, getSg)) }, 201));
  t.add('DELETE', '/security-group-rules/:id', (ctx) => {
    const r = mustGet(ctx, store.rules, ctx.params.id!, 'SecurityGroupRuleNotFound', `Security group rule ${ctx.params.id} does not exist`);
    store.rules.delete(r.id);
    const g = store.securityGroups.get(r.security_group_id);
    if (g) bump(store, g);
    return noContent();
  });
}

function createRule(store: EmulatorStore, ctx: Ctx, getSg: (ctx: Ctx, id: string) => SgRec): RuleRec {
  const b = wrapped(ctx, 'security_group_rule');
  const g = getSg(ctx, String(b.security_group_id));
  const ethertype = (b.ethertype ?? 'IPv4') as 'IPv4' | 'IPv6';
  const direction = b.direction as 'ingress' | 'egress';
  if (direction !== 'ingress' && direction !== 'egress')
    throw new ApiFault(400, 'HTTPBadRequest', `Invalid input for direction. Reason: ${String(b.direction)} is not in valid_values.`);
  const prefix = typeof b.remote_ip_prefix === 'string' ? b.remote_ip_prefix : null;
  const cidr = prefix ? parseCidr(prefix) : undefined;
  if (prefix && !cidr) throw new ApiFault(400, 'HTTPBadRequest', `Invalid input for remote_ip_prefix. Reason: '${prefix}' is not a valid IP subnet.`);
  const normalized = cidr ? formatCidr(cidr) : null;
  if (cidr && (cidr.family === 4) !== (ethertype === 'IPv4'))
    throw new ApiFault(400, 'SecurityGroupRuleParameterConflict', `Conflicting value ethertype ${ethertype} for CIDR ${normalized}`);
  const min = b.port_range_min == null ? null : Number(b.port_range_min);
  const max = b.port_range_max == null ? null : Number(b.port_range_max);
  const protocol = b.protocol == null ? null : String(b.protocol);
  if ((protocol === 'tcp' || protocol === 'udp') && min !== null && max !== null && min > max) {
    throw new ApiFault(400, 'SecurityGroupInvalidPortRange', 'For TCP/UDP protocols, port_range_min must be <= port_range_max');
  }
  const rule: RuleRec = {
    ...stamps(store, g.project_id),
    security_group_id: g.id,
    direction,
    ethertype,
    protocol,
    port_range_min: min,
    port_range_max: max,
    remote_ip_prefix: prefix,
    normalized_cidr: normalized,
    remote_group_id: typeof b.remote_group_id === 'string' ? b.remote_group_id : null,
    description: String(b.description ?? ''),
    revision_number: 0,
  };
  const same = [...store.rules.values()].find(
    (r) =>
      r.security_group_id === g.id &&
      r.direction === direction &&
      r.ethertype === ethertype &&
      r.protocol === protocol &&
      r.port_range_min === min &&
      r.port_range_max === max &&
      r.normalized_cidr === normalized &&
      r.remote_group_id === rule.remote_group_id,
  );
  if (same) throw new ApiFault(409, 'SecurityGroupRuleExists', `Security group rule already exists. Rule id is ${same.id}.`);
  store.rules.set(rule.id, rule);
  bump(store, g);
  return rule;
}

function floatingIpRoutes(store: EmulatorStore, t: RouteTable): void {
  const get = (ctx: Ctx) => mustGet(ctx, store.floatingIps, ctx.params.id!, 'FloatingIPNotFound', `Floating IP ${ctx.params.id} could not be found`);
  t.add('GET', '/floatingips', (ctx) =>
    ok(listReply(ctx, 'floatingips', [...store.floatingIps.values()].filter((f) => visible(ctx, f)).map(fipView), '/floatingips')),
  );
  t.add('GET', '/floatingips/:id', (ctx) => ok({ floatingip: fipView(get(ctx)) }));
  t.add('POST', '/floatingips', (ctx) => {
    const b = wrapped(ctx, 'floatingip');
    const net = mustGet(ctx, store.networks, String(b.floating_network_id), 'NetworkNotFound', `Network ${String(b.floating_network_id)} could not be found.`);
    const subnet = [...store.subnets.values()].find((s) => s.network_id === net.id);
    if (!net.external || !subnet) throw new ApiFault(400, 'BadRequest', `Bad floatingip request: Network ${net.id} is not a valid external network.`);
    const holder = createPortRec(store, { projectId: '', networkId: net.id, deviceOwner: 'network:floatingip' });
    const f: FipRec = {
      ...stamps(store, ctx.projectId),
      floating_ip_address: holder.fixed_ips[0]!.ip_address,
      floating_network_id: net.id,
      port_id: null,
      fixed_ip_address: null,
      router_id: null,
      description: String(b.description ?? ''),
    };
    holder.device_id = f.id;
    store.floatingIps.set(f.id, f);
    if (typeof b.port_id === 'string') associate(store, ctx, f, b.port_id);
    return ok({ floatingip: fipView(f) }, 201);
  });
  t.add('PUT', '/floatingips/:id', (ctx) => {
    const f = get(ctx);
    const b = wrapped(ctx, 'floatingip');
    if (b.port_id === null) Object.assign(f, { port_id: null, fixed_ip_address: null, router_id: null });
    else if (typeof b.port_id === 'string') associate(store, ctx, f, b.port_id);
    bump(store, f);
    return ok({ floatingip: fipView(f) });
  });
  t.add('DELETE', '/floatingips/:id', (ctx) => {
    const f = get(ctx);
    store.floatingIps.delete(f.id);
    for (const p of store.ports.values()) if (p.device_id === f.id && p.device_owner === 'network:floatingip') store.ports.delete(p.id);
    return noContent();
  });
}

function associate(store: EmulatorStore, ctx: Ctx, f: FipRec, portId: string): void {
  const port = mustGet(ctx, store.ports, portId, 'PortNotFound', `Port ${portId} could not be found.`);
  const fixed = port.fixed_ips.find((x) => isIP(x.ip_address) === 4);
  if (!fixed) throw new ApiFault(400, 'BadRequest', `Bad floatingip request: Port ${portId} does not have an IPv4 address.`);
  const router = [...store.routers.values()].find((r) =>
    [...store.ports.values()].some(
      (p) => p.device_id === r.id && p.fixed_ips.some((x) => cidrContains(parseCidr(store.subnets.get(x.subnet_id)!.cidr)!, fixed.ip_address)),
    ),
  );
  Object.assign(f, { port_id: port.id, fixed_ip_address: fixed.ip_address, router_id: router?.id ?? null });
}

/** The pools a new subnet asks for, checked as Neutron checks them, or its default pools. */
function allocationPools(asked: unknown, cidr: Cidr, gateway: string | null): AddressRange[] {
  if (asked === undefined || asked === null) return defaultPools(cidr, gateway);
  const pools = checkPools(asked, cidr, gateway);
  if (!Array.isArray(pools)) throw new ApiFault(pools.status, pools.type, pools.message);
  return pools;
}
