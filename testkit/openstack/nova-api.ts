// Emulated Nova (up to microversion 2.69, down cells included): servers with OS-EXT-STS states, addresses and security groups
// derived from their Neutron ports, reboot/addSecurityGroup actions, delete, tags, metadata, flavors.
import { ApiFault, RouteTable, isoSeconds, noContent, ok, wrapped, type Ctx } from './http-kit.ts';
import { createPortRec, ensureDefaultGroup, mustGet as neutronGet } from './neutron-common.ts';
import type { EmulatorStore, ServerRec } from './emulator-store.ts';

type Obj = Record<string, unknown>;

export const NOVA_MAX_MICROVERSION: [number, number] = [2, 69];
const REBOOT_TYPES = ['HARD', 'Hard', 'hard', 'SOFT', 'Soft', 'soft'];

/** Nova derives `status` from vm_state, with a few task states showing through. */
export function serverStatus(s: Pick<ServerRec, 'vm_state' | 'task_state'>): string {
  if (s.task_state === 'rebooting' || s.task_state === 'reboot_pending' || s.task_state === 'reboot_started') return 'REBOOT';
  if (s.task_state === 'rebooting_hard' || s.task_state === 'reboot_pending_hard' || s.task_state === 'reboot_started_hard') return 'HARD_REBOOT';
  const map: Record<string, string> = {
    active: 'ACTIVE',
    building: 'BUILD',
    error: 'ERROR',
    stopped: 'SHUTOFF',
    paused: 'PAUSED',
    suspended: 'SUSPENDED',
    deleted: 'DELETED',
  };
  return map[s.vm_state] ?? s.vm_state.toUpperCase();
}

const atLeast = (ctx: Ctx, minor: number) => ctx.microversion[0] > 2 || ctx.microversion[1] >= minor;

export function serverView(store: EmulatorStore, s: ServerRec, ctx: Ctx): Obj {
  // Nova 2.69: a server whose cell database is unreachable is shown with the few fields the API
  // database holds (nova/api/openstack/compute/views/servers.py, _show_and_list_construct).
  if (s.cellDown)
    return {
      id: s.id,
      status: 'UNKNOWN',
      tenant_id: s.project_id,
      created: isoSeconds(s.created),
      links: [{ rel: 'self', href: `${ctx.baseUrl}/compute/v2.1/servers/${s.id}` }],
    };
  const ports = [...store.ports.values()].filter((p) => p.device_id === s.id);
  const addresses: Record<string, Obj[]> = {};
  for (const p of ports) {
    const net = store.networks.get(p.network_id)?.name ?? p.network_id;
    for (const f of p.fixed_ips) {
      (addresses[net] ??= []).push({
        version: f.ip_address.includes(':') ? 6 : 4,
        addr: f.ip_address,
        'OS-EXT-IPS:type': 'fixed',
        'OS-EXT-IPS-MAC:mac_addr': p.mac_address,
      });
    }
    for (const fip of store.floatingIps.values()) {
      if (fip.port_id === p.id)
        (addresses[net] ??= []).push({ version: 4, addr: fip.floating_ip_address, 'OS-EXT-IPS:type': 'floating', 'OS-EXT-IPS-MAC:mac_addr': p.mac_address });
    }
  }
  const groupNames = [...new Set(ports.flatMap((p) => p.security_groups).map((id) => store.securityGroups.get(id)?.name ?? id))];
  const flavor = store.flavors.get(s.flavorId);
  const view: Obj = {
    id: s.id,
    name: s.name,
    status: serverStatus(s),
    tenant_id: s.project_id,
    user_id: s.user_id,
    metadata: s.metadata,
    hostId: s.host ? 'f0e1d2c3b4a5' : '',
    image: { id: s.imageId, links: [] },
    // Microversion 2.47 embeds the flavor; older ones only link to it.
    flavor: atLeast(ctx, 47)
      ? {
          vcpus: flavor?.vcpus ?? 1,
          ram: flavor?.ram ?? 64,
          disk: flavor?.disk ?? 1,
          ephemeral: 0,
          swap: 0,
          original_name: flavor?.name ?? s.flavorId,
          extra_specs: {},
        }
      : { id: s.flavorId, links: [] },
    created: isoSeconds(s.created),
    updated: isoSeconds(s.updated),
    addresses,
    accessIPv4: '',
    accessIPv6: '',
    links: [{ rel: 'self', href: `${ctx.baseUrl}/compute/v2.1/servers/${s.id}` }],
    'OS-DCF:diskConfig': 'MANUAL',
    progress: 0,
    'OS-EXT-AZ:availability_zone': 'nova',
    config_drive: '',
    key_name: s.key_name,
    'OS-SRV-USG:launched_at': s.vm_state === 'building' ? null : isoSeconds(s.created),
    'OS-SRV-USG:terminated_at': null,
    'OS-EXT-STS:task_state': s.task_state,
    'OS-EXT-STS:vm_state': s.vm_state,
    'OS-EXT-STS:power_state': s.power_state,
    'os-extended-volumes:volumes_attached': [],
    locked: false,
    description: null,
  };
  if (groupNames.length) view.security_groups = groupNames.map((name) => ({ name }));
  if (atLeast(ctx, 26)) view.tags = [...s.tags];
  if (ctx.isAdmin)
    Object.assign(view, {
      'OS-EXT-SRV-ATTR:host': s.host,
      'OS-EXT-SRV-ATTR:hypervisor_hostname': s.host,
      'OS-EXT-SRV-ATTR:instance_name': `instance-${s.id.slice(0, 8)}`,
    });
  return view;
}

function visibleServers(store: EmulatorStore, ctx: Ctx): ServerRec[] {
  const all = ctx.isAdmin && /^(1|true|yes)$/i.test(ctx.query.get('all_tenants') ?? '');
  const project = ctx.query.get('project_id');
  return [...store.servers.values()].filter((s) => (all ? !project || s.project_id === project : s.project_id === ctx.projectId));
}

function filterServers(ctx: Ctx, servers: ServerRec[]): ServerRec[] {
  const name = ctx.query.get('name');
  const status = ctx.query.get('status');
  const tags = ctx.query.get('tags')?.split(',');
  const tagsAny = ctx.query.get('tags-any')?.split(',');
  const re = name ? new RegExp(name) : undefined;
  return servers.filter(
    (s) =>
      (!re || re.test(s.name)) &&
      (!status || serverStatus(s) === status.toUpperCase()) &&
      (!tags || tags.every((t) => s.tags.includes(t))) &&
      (!tagsAny || tagsAny.some((t) => s.tags.includes(t))),
  );
}

/** Nova paging: newest first, limit capped at max_limit, `servers_links` next whenever a page is full. */
function pageServers(store: EmulatorStore, ctx: Ctx, servers: ServerRec[], path: string): { page: ServerRec[]; links?: Obj[] } {
  const sorted = [...servers].sort((a, b) => b.created - a.created || b.id.localeCompare(a.id));
  const marker = ctx.query.get('marker');
  let start = 0;
  if (marker) {
    const i = sorted.findIndex((s) => s.id === marker);
    if (i < 0) throw new ApiFault(400, 'badRequest', `marker [${marker}] not found`);
    start = i + 1;
  }
  const limit = Math.min(Number(ctx.query.get('limit') ?? store.limits.maxPageSize), store.limits.maxPageSize);
  const page = sorted.slice(start, start + limit);
  if (page.length < limit) return { page };
  const q = new URLSearchParams(ctx.query);
  q.set('limit', String(limit));
  q.set('marker', page.at(-1)!.id);
  return { page, links: [{ rel: 'next', href: `${ctx.baseUrl}/compute/v2.1${path}?${q}` }] };
}

export function novaRoutes(store: EmulatorStore): RouteTable {
  const t = new RouteTable();
  const get = (ctx: Ctx): ServerRec => {
    const s = store.servers.get(ctx.params.id!);
    if (!s || (!ctx.isAdmin && s.project_id !== ctx.projectId)) throw new ApiFault(404, 'itemNotFound', `Instance ${ctx.params.id} could not be found.`);
    return s;
  };
  for (const detail of [false, true]) {
    const path = detail ? '/servers/detail' : '/servers';
    t.add('GET', path, (ctx) => {
      // Before 2.69 Nova leaves the servers of a down cell out of lists without a word.
      const listed = visibleServers(store, ctx).filter((s) => !s.cellDown || atLeast(ctx, 69));
      const { page, links } = pageServers(store, ctx, filterServers(ctx, listed), path);
      const servers = page.map((s) =>
        detail ? serverView(store, s, ctx) : { id: s.id, name: s.name, links: [{ rel: 'self', href: `${ctx.baseUrl}/compute/v2.1/servers/${s.id}` }] },
      );
      return ok(links ? { servers, servers_links: links } : { servers });
    });
  }
  t.add('POST', '/servers', (ctx) => createServer(store, ctx));
  t.add('GET', '/servers/:id', (ctx) => ok({ server: serverView(store, get(ctx), ctx) }));
  t.add('DELETE', '/servers/:id', (ctx) => {
    const s = get(ctx);
    if (s.task_state !== 'deleting') {
      s.task_state = 'deleting';
      s.updated = store.clock.now();
      store.schedule('server-delete', s.id, store.timings.serverDeleteMs, () => removeServer(store, s.id));
    }
    return noContent();
  });
  t.add('POST', '/servers/:id/action', (ctx) => serverAction(store, ctx, get(ctx)));
  t.add('GET', '/servers/:id/metadata', (ctx) => ok({ metadata: get(ctx).metadata }));
  t.add('POST', '/servers/:id/metadata', (ctx) => {
    const s = get(ctx);
    s.metadata = { ...s.metadata, ...checkMetadata(wrapped(ctx, 'metadata')) };
    return ok({ metadata: s.metadata });
  });
  t.add('PUT', '/servers/:id/metadata', (ctx) => {
    const s = get(ctx);
    s.metadata = checkMetadata(wrapped(ctx, 'metadata'));
    return ok({ metadata: s.metadata });
  });
  t.add('DELETE', '/servers/:id/metadata/:key', (ctx) => {
    const s = get(ctx);
    if (!(ctx.params.key! in s.metadata)) throw new ApiFault(404, 'itemNotFound', 'Metadata item was not found');
    delete s.metadata[ctx.params.key!];
    return noContent();
  });
  tagRoutes(t, get);
  flavorRoutes(store, t);
  return t;
}

function checkMetadata(md: Record<string, unknown>): Record<string, string> {
  for (const [k, v] of Object.entries(md)) {
    if (typeof v !== 'string')
      throw new ApiFault(
        400,
        'badRequest',
        `Invalid input for field/attribute metadata. Value: ${JSON.stringify(md)}. ${JSON.stringify(v)} is not of type 'string'`,
      );
    if (k.length === 0 || k.length > 255 || v.length > 255)
      throw new ApiFault(
        400,
        'badRequest',
        `Invalid input for field/attribute metadata. Value: ${JSON.stringify(md)}. Keys and values must be 1 to 255 characters`,
      );
  }
  return md as Record<string, string>;
}

function tagRoutes(t: RouteTable, get: (ctx: Ctx) => ServerRec): void {
  const need = (ctx: Ctx) => {
    if (!atLeast(ctx, 26)) throw new ApiFault(404, 'itemNotFound', 'The resource could not be found.');
    return get(ctx);
  };
  const checkTag = (tag: string) => {
    if (tag.length < 1 || tag.length > 60 || /[/,]/.test(tag))
      throw new ApiFault(
        400,
        'badRequest',
        `Invalid input for field/attribute tag. Value: ${tag}. '${tag}' does not match '^[^,/]*$' or is longer than 60 characters`,
      );
  };
  t.add('GET', '/servers/:id/tags', (ctx) => ok({ tags: need(ctx).tags }));
  t.add('PUT', '/servers/:id/tags', (ctx) => {
    const s = need(ctx);
    const tags = (ctx.body as Obj | undefined)?.tags;
    if (!Array.isArray(tags)) throw new ApiFault(400, 'badRequest', "Invalid input for field/attribute tags. 'tags' is a required property");
    tags.forEach((x) => checkTag(String(x)));
    if (tags.length > 50) throw new ApiFault(400, 'badRequest', 'The number of tags exceeded the per-server limit 50');
    s.tags = [...new Set(tags.map(String))];
    return ok({ tags: s.tags });
  });
  t.add('GET', '/servers/:id/tags/:tag', (ctx) => {
    if (!need(ctx).tags.includes(ctx.params.tag!)) throw new ApiFault(404, 'itemNotFound', `Tag '${ctx.params.tag}' could not be found.`);
    return noContent();
  });
  t.add('PUT', '/servers/:id/tags/:tag', (ctx) => {
    const s = need(ctx);
    const tag = ctx.params.tag!;
    checkTag(tag);
    if (s.tags.includes(tag)) return noContent();
    if (s.tags.length >= 50) throw new ApiFault(400, 'badRequest', 'The number of tags exceeded the per-server limit 50');
    s.tags.push(tag);
    return { status: 201, headers: { location: `${ctx.baseUrl}/compute/v2.1/servers/${s.id}/tags/${encodeURIComponent(tag)}` } };
  });
  t.add('DELETE', '/servers/:id/tags/:tag', (ctx) => {
    const s = need(ctx);
    if (!s.tags.includes(ctx.params.tag!)) throw new ApiFault(404, 'itemNotFound', `Tag '${ctx.params.tag}' could not be found.`);
    s.tags = s.tags.filter((x) => x !== ctx.params.tag);
    return noContent();
  });
  t.add('DELETE', '/servers/:id/tags', (ctx) => {
    need(ctx).tags = [];
    return noContent();
  });
}

function flavorRoutes(store: EmulatorStore, t: RouteTable): void {
  const view = (f: { id: string; name: string; vcpus: number; ram: number; disk: number }, detail: boolean) =>
    detail
      ? {
          id: f.id,
          name: f.name,
          vcpus: f.vcpus,
          ram: f.ram,
          disk: f.disk,
          'OS-FLV-EXT-DATA:ephemeral': 0,
          swap: '',
          rxtx_factor: 1,
          'os-flavor-access:is_public': true,
          links: [],
        }
      : { id: f.id, name: f.name, links: [] };
  t.add('GET', '/flavors', () => ok({ flavors: [...store.flavors.values()].map((f) => view(f, false)) }));
  t.add('GET', '/flavors/detail', () => ok({ flavors: [...store.flavors.values()].map((f) => view(f, true)) }));
  t.add('GET', '/flavors/:id', (ctx) => {
    const f = store.flavors.get(ctx.params.id!);
    if (!f) throw new ApiFault(404, 'itemNotFound', `Flavor ${ctx.params.id} could not be found.`);
    return ok({ flavor: view(f, true) });
  });
}

function findGroup(store: EmulatorStore, ctx: Ctx, projectId: string, nameOrId: string): string {
  const byId = store.securityGroups.get(nameOrId);
  if (byId && byId.project_id === projectId) return byId.id;
  const named = [...store.securityGroups.values()].filter((g) => g.project_id === projectId && g.name === nameOrId);
  if (named.length > 1)
    throw new ApiFault(409, 'conflictingRequest', `Multiple security group matches found for name '${nameOrId}', use an ID to be more specific.`);
  if (named.length === 0) throw new ApiFault(404, 'itemNotFound', `Security group ${nameOrId} is not found for project ${projectId}`);
  return named[0]!.id;
}

function createServer(store: EmulatorStore, ctx: Ctx) {
  const b = wrapped(ctx, 'server');
  if (typeof b.name !== 'string' || !b.name)
    throw new ApiFault(400, 'badRequest', "Invalid input for field/attribute server. Value: {...}. 'name' is a required property");
  const flavor = store.flavors.get(String(b.flavorRef)) ?? [...store.flavors.values()].find((f) => f.name === b.flavorRef);
  if (!flavor) throw new ApiFault(400, 'badRequest', `Flavor ${String(b.flavorRef)} could not be found.`);
  if (!store.images.has(String(b.imageRef))) throw new ApiFault(400, 'badRequest', 'Can not find requested image');
  if (b.networks === undefined && atLeast(ctx, 37))
    throw new ApiFault(400, 'badRequest', "Invalid input for field/attribute server. 'networks' is a required property");
  const nets = Array.isArray(b.networks) ? (b.networks as Obj[]) : [];
  for (const n of nets)
    neutronGet({ ...ctx, isAdmin: true }, store.networks, String(n.uuid), 'NetworkNotFound', `Network ${String(n.uuid)} could not be found.`);
  const groups = Array.isArray(b.security_groups) ? (b.security_groups as Obj[]).map((g) => String(g.name)) : ['default'];
  const sgIds = groups.map((g) => (g === 'default' ? ensureDefaultGroup(store, ctx.projectId).id : findGroup(store, ctx, ctx.projectId, g)));
  const now = store.clock.now();
  const s: ServerRec = {
    id: store.newId(),
    name: b.name,
    project_id: ctx.projectId,
    user_id: ctx.userId,
    flavorId: flavor.id,
    imageId: String(b.imageRef),
    status: 'BUILD',
    vm_state: 'building',
    task_state: 'scheduling',
    power_state: 0,
    created: now,
    updated: now,
    metadata: checkMetadata((b.metadata ?? {}) as Record<string, unknown>),
    tags: Array.isArray(b.tags) ? (b.tags as string[]) : [],
    host: 'emu-compute',
    key_name: typeof b.key_name === 'string' ? b.key_name : null,
  };
  store.servers.set(s.id, s);
  for (const n of nets) {
    createPortRec(store, {
      projectId: ctx.projectId,
      networkId: String(n.uuid),
      deviceId: s.id,
      deviceOwner: 'compute:nova',
      host: s.host,
      securityGroups: [...new Set(sgIds)],
    });
  }
  store.schedule('server-build', s.id, store.timings.serverBuildMs, () =>
    Object.assign(s, { vm_state: 'active', task_state: null, power_state: 1, updated: store.clock.now() }),
  );
  return ok(
    {
      server: {
        id: s.id,
        links: [],
        'OS-DCF:diskConfig': 'MANUAL',
        security_groups: groups.map((name) => ({ name })),
        adminPass: store.newSecret().slice(0, 12),
      },
    },
    202,
  );
}

export function removeServer(store: EmulatorStore, id: string): void {
  store.servers.delete(id);
  for (const p of store.ports.values()) {
    if (p.device_id !== id) continue;
    store.ports.delete(p.id);
    for (const f of store.floatingIps.values()) if (f.port_id === p.id) Object.assign(f, { port_id: null, fixed_ip_address: null, router_id: null });
  }
}

function serverAction(store: EmulatorStore, ctx: Ctx, s: ServerRec) {
  const body = (ctx.body ?? {}) as Obj;
  if ('reboot' in body) {
    const r = (body.reboot ?? {}) as Obj;
    if (r.type === undefined)
      throw new ApiFault(400, 'badRequest', `Invalid input for field/attribute reboot. Value: ${JSON.stringify(r)}. 'type' is a required property`);
    if (!REBOOT_TYPES.includes(String(r.type)))
      throw new ApiFault(
        400,
        'badRequest',
        `Invalid input for field/attribute type. Value: ${String(r.type)}. '${String(r.type)}' is not one of ['HARD', 'Hard', 'hard', 'SOFT', 'Soft', 'soft']`,
      );
    const hard = String(r.type).toUpperCase() === 'HARD';
    if (s.task_state === 'deleting' || (!hard && s.task_state))
      throw new ApiFault(409, 'conflictingRequest', `Cannot 'reboot' instance ${s.id} while it is in task_state ${s.task_state}`);
    if (s.vm_state === 'building' || (!hard && s.vm_state !== 'active'))
      throw new ApiFault(409, 'conflictingRequest', `Cannot 'reboot' instance ${s.id} while it is in vm_state ${s.vm_state}`);
    Object.assign(s, { task_state: hard ? 'rebooting_hard' : 'rebooting', updated: store.clock.now() });
    store.schedule('server-reboot', s.id, store.timings.serverRebootMs, () =>
      Object.assign(s, { vm_state: 'active', task_state: null, power_state: 1, updated: store.clock.now() }),
    );
    return noContent(202);
  }
  for (const action of ['addSecurityGroup', 'removeSecurityGroup'] as const) {
    if (!(action in body)) continue;
    const name = String(((body[action] ?? {}) as Obj).name ?? '');
    const groupId = findGroup(store, ctx, s.project_id, name);
    const ports = [...store.ports.values()].filter((p) => p.device_id === s.id);
    const has = ports.some((p) => p.security_groups.includes(groupId));
    if (action === 'addSecurityGroup') {
      // Nova passes the doubled list to Neutron and relays its validation error.
      if (has) throw new ApiFault(400, 'badRequest', `Invalid input for security_groups. Reason: Duplicate items in the list: '${groupId}'.`);
      for (const p of ports) p.security_groups = [...p.security_groups, groupId];
    } else {
      if (!has) throw new ApiFault(404, 'itemNotFound', `Security group ${name} not associated with the instance ${s.id}`);
      for (const p of ports) p.security_groups = p.security_groups.filter((g) => g !== groupId);
    }
    return noContent(202);
  }
  throw new ApiFault(400, 'badRequest', 'There is no such action: ' + Object.keys(body).join(','));
}
