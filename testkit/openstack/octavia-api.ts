// Emulated Octavia v2: load balancers with provisioning_status (PENDING_* → ACTIVE / gone, or ERROR
// on an injected failure; an ERROR load balancer accepts a delete again), immutable
// while pending (409), refused delete with children unless cascade, VIP ports in Neutron; listeners.
import { ApiFault, RouteTable, isoSeconds, noContent, ok, wrapped, type Ctx } from './http-kit.ts';
import { createPortRec } from './neutron-common.ts';
import type { EmulatorStore, LbRec, ListenerRec } from './emulator-store.ts';

type Obj = Record<string, unknown>;

function view(store: EmulatorStore, lb: LbRec): Obj {
  const listeners = [...store.listeners.values()].filter((l) => l.loadbalancer_id === lb.id).map((l) => ({ id: l.id }));
  return {
    id: lb.id,
    name: lb.name,
    description: lb.description,
    project_id: lb.project_id,
    tenant_id: lb.project_id,
    provisioning_status: lb.provisioning_status,
    operating_status: lb.operating_status,
    admin_state_up: true,
    vip_address: lb.vip_address,
    vip_port_id: lb.vip_port_id,
    vip_subnet_id: lb.vip_subnet_id,
    vip_network_id: lb.vip_network_id,
    vip_qos_policy_id: null,
    listeners,
    pools: [],
    provider: 'amphora',
    flavor_id: null,
    availability_zone: null,
    created_at: isoSeconds(lb.created_at),
    updated_at: isoSeconds(lb.updated_at),
    tags: lb.tags,
  };
}

const listenerView = (l: ListenerRec): Obj => ({
  id: l.id,
  name: l.name,
  project_id: l.project_id,
  protocol: l.protocol,
  protocol_port: l.protocol_port,
  loadbalancers: [{ id: l.loadbalancer_id }],
  provisioning_status: 'ACTIVE',
  operating_status: 'ONLINE',
});

export function octaviaRoutes(store: EmulatorStore): RouteTable {
  const t = new RouteTable();
  const get = (ctx: Ctx, id: string): LbRec => {
    const lb = store.loadBalancers.get(id);
    if (!lb || (!ctx.isAdmin && lb.project_id !== ctx.projectId)) throw new ApiFault(404, 'Client', `Load Balancer ${id} not found.`);
    return lb;
  };
  const mutable = (lb: LbRec) => {
    if (lb.provisioning_status.startsWith('PENDING_')) throw new ApiFault(409, 'Client', `Load Balancer ${lb.id} is immutable and cannot be updated.`);
  };
  t.add('GET', '/lbaas/loadbalancers', (ctx) => ok(listLbs(store, ctx)));
  t.add('GET', '/lbaas/loadbalancers/:id', (ctx) => ok({ loadbalancer: view(store, get(ctx, ctx.params.id!)) }));
  t.add('POST', '/lbaas/loadbalancers', (ctx) => {
    const b = wrapped(ctx, 'loadbalancer');
    const subnet = store.subnets.get(String(b.vip_subnet_id));
    if (!subnet) throw new ApiFault(400, 'Client', `Validation failure: Subnet ${String(b.vip_subnet_id)} not found.`);
    const now = store.clock.now();
    const id = store.newId();
    const port = createPortRec(store, {
      projectId: ctx.projectId,
      networkId: subnet.network_id,
      name: `octavia-lb-${id}`,
      deviceId: `lb-${id}`,
      deviceOwner: 'Octavia',
    });
    const lb: LbRec = {
      id,
      name: String(b.name ?? ''),
      description: String(b.description ?? ''),
      project_id: ctx.projectId,
      provisioning_status: 'PENDING_CREATE',
      operating_status: 'OFFLINE',
      vip_address: port.fixed_ips[0]!.ip_address,
      vip_port_id: port.id,
      vip_subnet_id: subnet.id,
      vip_network_id: subnet.network_id,
      created_at: now,
      updated_at: now,
      tags: Array.isArray(b.tags) ? (b.tags as string[]) : [],
    };
    store.loadBalancers.set(id, lb);
    store.schedule('lb-create', id, store.timings.lbCreateMs, () =>
      Object.assign(lb, { provisioning_status: 'ACTIVE', operating_status: 'ONLINE', updated_at: store.clock.now() }),
    );
    return ok({ loadbalancer: view(store, lb) }, 201);
  });
  t.add('DELETE', '/lbaas/loadbalancers/:id', (ctx) => {
    const lb = get(ctx, ctx.params.id!);
    mutable(lb);
    const cascade = ctx.query.get('cascade') === 'true';
    const children = [...store.listeners.values()].filter((l) => l.loadbalancer_id === lb.id);
    if (children.length && !cascade) throw new ApiFault(400, 'Client', `Cannot delete Load Balancer ${lb.id} - it has children`);
    Object.assign(lb, { provisioning_status: 'PENDING_DELETE', updated_at: store.clock.now() });
    store.schedule(
      'lb-delete',
      lb.id,
      store.timings.lbDeleteMs,
      () => removeLb(store, lb),
      () => Object.assign(lb, { provisioning_status: 'ERROR', updated_at: store.clock.now() }),
    );
    return noContent();
  });
  t.add('GET', '/lbaas/listeners', (ctx) =>
    ok({ listeners: [...store.listeners.values()].filter((l) => ctx.isAdmin || l.project_id === ctx.projectId).map(listenerView) }),
  );
  t.add('POST', '/lbaas/listeners', (ctx) => {
    const b = wrapped(ctx, 'listener');
    const lb = get(ctx, String(b.loadbalancer_id));
    mutable(lb);
    const l: ListenerRec = {
      id: store.newId(),
      name: String(b.name ?? ''),
      project_id: lb.project_id,
      loadbalancer_id: lb.id,
      protocol: String(b.protocol ?? 'TCP'),
      protocol_port: Number(b.protocol_port ?? 80),
    };
    store.listeners.set(l.id, l);
    Object.assign(lb, { provisioning_status: 'PENDING_UPDATE', updated_at: store.clock.now() });
    store.schedule('lb-update', lb.id, store.timings.lbUpdateMs, () => Object.assign(lb, { provisioning_status: 'ACTIVE', updated_at: store.clock.now() }));
    return ok({ listener: listenerView(l) }, 201);
  });
  return t;
}

function removeLb(store: EmulatorStore, lb: LbRec): void {
  store.loadBalancers.delete(lb.id);
  for (const l of store.listeners.values()) if (l.loadbalancer_id === lb.id) store.listeners.delete(l.id);
  store.ports.delete(lb.vip_port_id);
  for (const f of store.floatingIps.values()) if (f.port_id === lb.vip_port_id) Object.assign(f, { port_id: null, fixed_ip_address: null, router_id: null });
}

function listLbs(store: EmulatorStore, ctx: Ctx): Obj {
  const filters = ['name', 'project_id', 'vip_address', 'provisioning_status'].map((k) => [k, ctx.query.get(k)] as const).filter(([, v]) => v !== null);
  const all = [...store.loadBalancers.values()]
    .filter((lb) => ctx.isAdmin || lb.project_id === ctx.projectId)
    .map((lb) => view(store, lb))
    .filter((v) => filters.every(([k, want]) => String(v[k]) === want))
    .sort((a, b) => String(a.id).localeCompare(String(b.id)));
  const marker = ctx.query.get('marker');
  const rest = marker ? all.filter((v) => String(v.id) > marker) : all;
  const limit = Math.min(Number(ctx.query.get('limit') ?? store.limits.maxPageSize), store.limits.maxPageSize);
  const page = rest.slice(0, limit);
  const links: Obj[] = [];
  if (page.length === limit && rest.length > limit) {
    const q = new URLSearchParams(ctx.query);
    q.set('marker', String(page.at(-1)!.id));
    links.push({ rel: 'next', href: `${ctx.baseUrl}/load-balancer/v2/lbaas/loadbalancers?${q}` });
  }
  return { loadbalancers: page, loadbalancers_links: links };
}
