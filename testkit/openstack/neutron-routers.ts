// Emulated Neutron routers: extra routes with Neutron's validation order and messages, the route limit
// (400 RoutesExhausted), extraroute-atomic add/remove, revision_number with If-Match (412), interfaces.
import { ApiFault, RouteTable, noContent, ok, wrapped, type Ctx } from './http-kit.ts';
import { cidrContains, formatCidr, parseCidr } from './ip-math.ts';
import { bump, createPortRec, listReply, mustGet, standardView, stamps, visible } from './neutron-common.ts';
import type { EmulatorStore, RouteRec, RouterRec } from './emulator-store.ts';
import { isIP } from 'node:net';

type Obj = Record<string, unknown>;

const pyRoute = (r: RouteRec) => `{'destination': '${r.destination}', 'nexthop': '${r.nexthop}'}`;
const badRoutes = (reason: string) => new ApiFault(400, 'HTTPBadRequest', `Invalid input for routes. Reason: ${reason}`);

/** API-layer validation (before the plugin): keys, CIDR and IP syntax, duplicates. */
export function parseRoutes(raw: unknown): RouteRec[] {
  if (raw === null) return [];
  if (!Array.isArray(raw)) throw badRoutes(`'${JSON.stringify(raw)}' is not a list.`);
  const out: RouteRec[] = [];
  for (const item of raw as Obj[]) {
    const keys = Object.keys(item ?? {});
    if (keys.length !== 2 || !keys.includes('destination') || !keys.includes('nexthop')) {
      throw badRoutes(
        `Validation of dictionary's keys failed. Expected keys: {'nexthop', 'destination'} Provided keys: {${keys.map((k) => `'${k}'`).join(', ')}}.`,
      );
    }
    const destination = String(item.destination);
    const c = parseCidr(destination);
    if (!c || !destination.includes('/')) throw badRoutes(`'${destination}' is not a valid CIDR.`);
    if (c.address !== c.base) throw badRoutes(`'${destination}' is not a recognized CIDR, '${formatCidr(c)}' is recommended.`);
    const nexthop = String(item.nexthop);
    if (!isIP(nexthop)) throw badRoutes(`'${nexthop}' is not a valid IP address.`);
    const r = { destination, nexthop };
    if (out.some((o) => o.destination === r.destination && o.nexthop === r.nexthop)) throw badRoutes(`Duplicate hostroute '${pyRoute(r)}'.`);
    out.push(r);
  }
  return out;
}

/** Plugin-layer validation (neutron/db/extraroute_db.py): the limit first, then each next hop. */
export function checkRoutes(store: EmulatorStore, router: RouterRec, routes: RouteRec[]): void {
  if (routes.length > store.limits.maxRoutes) {
    throw new ApiFault(
      400,
      'RoutesExhausted',
      `Unable to complete operation for ${router.id}. The number of routes exceeds the maximum ${store.limits.maxRoutes}.`,
    );
  }
  const ports = [...store.ports.values()].filter((p) => p.device_id === router.id);
  const fixed = ports.flatMap((p) => p.fixed_ips);
  const cidrs = fixed.map((f) => parseCidr(store.subnets.get(f.subnet_id)!.cidr)!);
  const ips = new Set(fixed.map((f) => f.ip_address));
  const list = `[${routes.map(pyRoute).join(', ')}]`;
  for (const r of routes) {
    if (!cidrs.some((c) => cidrContains(c, r.nexthop)))
      throw new ApiFault(400, 'InvalidRoutes', `Invalid format for routes: ${list}, the nexthop is not connected with router`);
    if (ips.has(r.nexthop)) throw new ApiFault(400, 'InvalidRoutes', `Invalid format for routes: ${list}, the nexthop is used by router`);
  }
}

const sortRoutes = (routes: RouteRec[]) => [...routes].sort((a, b) => a.destination.localeCompare(b.destination) || a.nexthop.localeCompare(b.nexthop));
const sameRoute = (a: RouteRec, b: RouteRec) => a.destination === b.destination && a.nexthop === b.nexthop;

export function routerView(r: RouterRec): Obj {
  return {
    ...standardView(r),
    name: r.name,
    admin_state_up: r.admin_state_up,
    status: 'ACTIVE',
    external_gateway_info: r.external_gateway_info,
    routes: sortRoutes(r.routes),
    distributed: false,
    ha: false,
    availability_zone_hints: [],
    availability_zones: [],
    flavor_id: null,
    description: r.description,
  };
}

/** revision-if-match: `If-Match: revision_number=N` must equal the current revision; without the extension Neutron ignores the header. */
export function checkIfMatch(store: EmulatorStore, ctx: Ctx, rec: { revision_number: number }): void {
  if (!store.neutronExtensions.has('revision-if-match')) return;
  const header = ctx.headers['if-match'];
  const m = typeof header === 'string' ? /revision_number=(\d+)/.exec(header) : null;
  if (m && Number(m[1]) !== rec.revision_number) {
    throw new ApiFault(412, 'RevisionNumberConstraintFailed', `Constrained to ${m[1]}, but current revision is ${rec.revision_number}`);
  }
}

const sameRoutes = (a: RouteRec[], b: RouteRec[]) => a.length === b.length && a.every((r) => b.some((o) => sameRoute(o, r)));

function setRoutes(store: EmulatorStore, router: RouterRec, routes: RouteRec[]): void {
  checkRoutes(store, router, routes);
  const changed = !sameRoutes(routes, router.routes);
  router.routes = routes;
  if (changed) bump(store, router);
}

/** add_extraroutes/remove_extraroutes read body.router.routes without checks: anything else is a 500 upstream. */
function atomicRoutes(ctx: Ctx, action: string): RouteRec[] {
  const routes = ((ctx.body as Obj | undefined)?.router as Obj | undefined)?.routes;
  const serverError = () => new ApiFault(500, 'HTTPInternalServerError', 'Request Failed: internal server error while processing your request.');
  if (routes === undefined) throw serverError();
  // Upstream's remove_extraroutes indexes route['nexthop'] before validating: a KeyError, so a 500.
  if (action === 'remove_extraroutes' && Array.isArray(routes) && routes.some((r) => !(r && typeof r === 'object' && 'nexthop' in r))) throw serverError();
  return parseRoutes(routes);
}

/**
 * A write by another client, applied straight to the store (a fault's routeWriteAfter): removes and
 * adds routes as a full-list PUT of the resulting list would, bumping the revision when anything changed.
 * An unknown router is ignored (the test's router was deleted: nothing for the other writer to do).
 */
export function applyConcurrentRouteWrite(store: EmulatorStore, w: { routerId: string; remove?: RouteRec[]; add?: RouteRec[] }): void {
  const router = store.routers.get(w.routerId);
  if (!router) return;
  const kept = router.routes.filter((o) => !(w.remove ?? []).some((r) => sameRoute(o, r)));
  const next = [...kept, ...(w.add ?? []).filter((a) => !kept.some((o) => sameRoute(o, a)))];
  if (sameRoutes(next, router.routes)) return;
  router.routes = next;
  bump(store, router);
}

export function routerRoutes(store: EmulatorStore, t: RouteTable): void {
  const get = (ctx: Ctx) => mustGet(ctx, store.routers, ctx.params.id!, 'RouterNotFound', `Router ${ctx.params.id} could not be found`);
  t.add('GET', '/routers', (ctx) => ok(listReply(ctx, 'routers', [...store.routers.values()].filter((r) => visible(ctx, r)).map(routerView), '/routers')));
  t.add('POST', '/routers', (ctx) => {
    const b = wrapped(ctx, 'router');
    const r: RouterRec = {
      ...stamps(store, String(b.project_id ?? ctx.projectId)),
      name: String(b.name ?? ''),
      routes: [],
      admin_state_up: b.admin_state_up !== false,
      external_gateway_info: b.external_gateway_info ?? null,
      description: String(b.description ?? ''),
    };
    store.routers.set(r.id, r);
    return ok({ router: routerView(r) }, 201);
  });
  t.add('GET', '/routers/:id', (ctx) => ok({ router: routerView(get(ctx)) }));
  t.add('PUT', '/routers/:id', (ctx) => {
    const router = get(ctx);
    const b = wrapped(ctx, 'router');
    const routes = 'routes' in b ? parseRoutes(b.routes) : undefined;
    const renamed = typeof b.name === 'string' && b.name !== router.name;
    // Neutron checks If-Match when it writes: an update that changes nothing succeeds even when stale.
    if (renamed || (routes && !sameRoutes(routes, router.routes))) checkIfMatch(store, ctx, router);
    if (routes) setRoutes(store, router, routes);
    if (renamed) {
      router.name = String(b.name);
      bump(store, router);
    }
    return ok({ router: routerView(router) });
  });
  t.add('DELETE', '/routers/:id', (ctx) => {
    const router = get(ctx);
    if ([...store.ports.values()].some((p) => p.device_id === router.id)) throw new ApiFault(409, 'RouterInUse', `Router ${router.id} still has ports`);
    store.routers.delete(router.id);
    return noContent();
  });
  for (const action of ['add_extraroutes', 'remove_extraroutes'] as const) {
    t.add('PUT', `/routers/:id/${action}`, (ctx) => {
      // Without extraroute-atomic the route is unknown to Neutron's router resource.
      if (!store.neutronExtensions.has('extraroute-atomic')) throw new ApiFault(404, 'HTTPNotFound', 'The resource could not be found.');
      const router = get(ctx);
      const given = atomicRoutes(ctx, action);
      const next =
        action === 'add_extraroutes'
          ? [...router.routes, ...given.filter((g) => !router.routes.some((o) => sameRoute(o, g)))]
          : router.routes.filter((o) => !given.some((g) => sameRoute(o, g)));
      setRoutes(store, router, next);
      return ok({ router: { ...routerView(router), gw_port_id: null, ha_vr_id: 0 } });
    });
  }
  t.add('PUT', '/routers/:id/add_router_interface', (ctx) => {
    const router = get(ctx);
    const subnetId = String((ctx.body as Obj | undefined)?.subnet_id ?? '');
    const subnet = mustGet(ctx, store.subnets, subnetId, 'SubnetNotFound', `Subnet ${subnetId} could not be found.`);
    const attached = [...store.ports.values()].some((p) => p.device_id === router.id && p.fixed_ips.some((f) => f.subnet_id === subnetId));
    if (attached) throw new ApiFault(400, 'BadRequest', `Bad router request: Router already has a port on subnet ${subnetId}.`);
    if (!subnet.gateway_ip) throw new ApiFault(400, 'BadRequest', `Bad router request: Subnet for router interface must have a gateway IP.`);
    const port = createPortRec(store, {
      projectId: router.project_id,
      networkId: subnet.network_id,
      fixedIps: [{ subnet_id: subnetId, ip_address: subnet.gateway_ip }],
      deviceId: router.id,
      deviceOwner: 'network:router_interface',
    });
    bump(store, router);
    return ok(interfaceInfo(router, port.id, subnet.network_id, subnetId));
  });
  t.add('PUT', '/routers/:id/remove_router_interface', (ctx) => {
    const router = get(ctx);
    const subnetId = String((ctx.body as Obj | undefined)?.subnet_id ?? '');
    const port = [...store.ports.values()].find((p) => p.device_id === router.id && p.fixed_ips.some((f) => f.subnet_id === subnetId));
    if (!port) throw new ApiFault(404, 'RouterInterfaceNotFoundForSubnet', `Router ${router.id} has no interface on subnet ${subnetId}`);
    const cidr = parseCidr(store.subnets.get(subnetId)!.cidr)!;
    if (router.routes.some((r) => cidrContains(cidr, r.nexthop))) {
      throw new ApiFault(
        409,
        'RouterInterfaceInUseByRoute',
        `Router interface for subnet ${subnetId} on router ${router.id} cannot be deleted, as it is required by one or more routes.`,
      );
    }
    store.ports.delete(port.id);
    bump(store, router);
    return ok(interfaceInfo(router, port.id, port.network_id, subnetId));
  });
}

function interfaceInfo(router: RouterRec, portId: string, networkId: string, subnetId: string): Obj {
  return {
    id: router.id,
    tenant_id: router.project_id,
    project_id: router.project_id,
    port_id: portId,
    network_id: networkId,
    subnet_id: subnetId,
    subnet_ids: [subnetId],
  };
}
