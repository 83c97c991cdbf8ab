// The emulator's admin API under /_admin (no token needed): faults, delayed state changes, the clock,
// token revocation, the request log, and direct edits of servers, volumes and load balancers.
import { ApiFault, RouteTable, noContent, ok, type Ctx } from './http-kit.ts';
import type { DelayKind, DelayRule, EmulatorStore } from './emulator-store.ts';
import type { FaultInjector, FaultRule, FaultSpec } from './fault-injector.ts';
import { createProjectsInBulk, parseBulkSpec } from './admin-bulk.ts';

type Obj = Record<string, unknown>;

const DELAY_KINDS: DelayKind[] = ['server-build', 'server-reboot', 'server-delete', 'volume-create', 'volume-delete', 'lb-create', 'lb-update', 'lb-delete'];
const bad = (message: string) => new ApiFault(400, 'BadRequest', message);

/** ISO strings for time fields become epoch milliseconds, as the store keeps them. */
function patchTimes(patch: Obj, keys: string[]): Obj {
  const out = { ...patch };
  for (const k of keys) if (typeof out[k] === 'string') out[k] = Date.parse(out[k]);
  return out;
}

/**
 * What the admin API drives: the emulator, seen through the members used here. Declared here
 * rather than imported so that the emulator (which mounts these routes) and this file do not import
 * each other.
 */
export interface AdminTarget {
  readonly store: EmulatorStore;
  readonly faults: FaultInjector;
  requests: unknown[];
  addFault(spec: FaultSpec): FaultRule;
  addDelay(rule: DelayRule): void;
  clearDelays(): void;
  revokeTokens(): void;
}

export function adminRoutes(emu: AdminTarget): RouteTable {
  const store = emu.store;
  const t = new RouteTable();
  t.add('GET', '/state', () => {
    store.tick();
    return ok({
      nowMs: store.clock.now(),
      servers: [...store.servers.values()],
      volumes: [...store.volumes.values()],
      loadbalancers: [...store.loadBalancers.values()],
      routers: [...store.routers.values()],
      ports: [...store.ports.values()],
      floatingips: [...store.floatingIps.values()],
      pending: store.pendingChanges(),
    });
  });
  t.add('GET', '/faults', () => ok({ faults: emu.faults.list() }));
  t.add('POST', '/faults', (ctx) => {
    try {
      return ok({ fault: emu.addFault((ctx.body ?? {}) as FaultSpec) }, 201);
    } catch (err) {
      throw bad(`bad fault: ${(err as Error).message}`);
    }
  });
  t.add('DELETE', '/faults', () => {
    emu.faults.clear();
    return noContent();
  });
  t.add('DELETE', '/faults/:id', (ctx) => {
    if (!emu.faults.remove(ctx.params.id!)) throw new ApiFault(404, 'NotFound', `no fault ${ctx.params.id}`);
    return noContent();
  });
  t.add('GET', '/delays', () => ok({ delays: store.delayRules, pending: store.pendingChanges() }));
  t.add('POST', '/delays', (ctx) => {
    const rule = (ctx.body ?? {}) as DelayRule;
    if (!DELAY_KINDS.includes(rule.kind)) throw bad(`kind must be one of ${DELAY_KINDS.join(', ')}`);
    emu.addDelay(rule);
    return ok({ delay: rule }, 201);
  });
  t.add('DELETE', '/delays', () => {
    emu.clearDelays();
    return noContent();
  });
  t.add('POST', '/clock/advance', (ctx) => {
    const clock = store.clock as { advance?: (ms: number) => void };
    if (typeof clock.advance !== 'function') throw bad('the emulator runs on the system clock; start it with a manual clock (--manual-clock) to advance it');
    clock.advance(Number((ctx.body as Obj | undefined)?.ms ?? 0));
    store.tick();
    return ok({ nowMs: store.clock.now() });
  });
  t.add('POST', '/tokens/revoke', () => {
    emu.revokeTokens();
    return noContent();
  });
  t.add('GET', '/requests', () => ok({ requests: emu.requests }));
  t.add('DELETE', '/requests', () => {
    emu.requests = [];
    return noContent();
  });
  const patch = (path: string, map: Map<string, object>, times: string[]) =>
    t.add('PATCH', `/${path}/:id`, (ctx: Ctx) => {
      const rec = map.get(ctx.params.id!);
      if (!rec) throw new ApiFault(404, 'NotFound', `no ${path} ${ctx.params.id}`);
      Object.assign(rec, patchTimes((ctx.body ?? {}) as Obj, times));
      return ok(rec);
    });
  patch('servers', store.servers, ['created', 'updated']);
  patch('volumes', store.volumes, ['created_at', 'updated_at']);
  patch('loadbalancers', store.loadBalancers, ['created_at', 'updated_at']);
  // Benchmarks: N projects with user, network, router and servers in one call (admin-bulk.ts).
  t.add('POST', '/bulk/projects', (ctx) => ok({ projects: createProjectsInBulk(store, parseBulkSpec(ctx.body)) }, 201));
  t.add('POST', '/volumes', (ctx) => {
    const b = (ctx.body ?? {}) as Obj;
    const now = store.clock.now();
    const id = typeof b.id === 'string' ? b.id : store.newId();
    const project = String(b.project_id ?? 'project-admin');
    const v = {
      id,
      name: typeof b.name === 'string' ? b.name : null,
      project_id: project,
      user_id: 'user-admin',
      size: Number(b.size ?? 1),
      status: String(b.status ?? 'available'),
      created_at: now,
      updated_at: now,
      description: null,
      metadata: {},
      attachments: [],
      volume_type: '__DEFAULT__',
    };
    store.volumes.set(id, v);
    return ok(v, 201);
  });
  return t;
}
