// Changes a router's routes without losing anyone else's, with the strongest method this Neutron
// offers (read from its extension list, once per writer):
// - extraroute-atomic: add_extraroutes / remove_extraroutes change only the routes named;
// - revision-if-match: a full-list PUT with `If-Match: revision_number=N`, read again and retried on 412.
//   Without the extension Neutron ignores the header, so it is only sent when advertised;
// - neither: a full-list PUT, then the router read again: a route that was there before and that this
//   write was not asked to remove, but is missing now (another full-list writer raced us), is put back.
//   What another writer added between our read and our write cannot be seen; its owner re-adds it
//   (the cloud route controller reconciles every few seconds).
// The signal is the leader's fence: it is checked before, and passed into, every write, so a writer
// whose leader lost its lease sends nothing more, even between the write and a repair.
import { KubewardError } from '../../base/errors.ts';
import type { NeutronApi } from '../../clients/openstack/openstack-client.ts';
import { isOpenStackError } from '../../clients/openstack/openstack-error.ts';
import type { ExtraRoute, Router } from '../../clients/openstack/openstack-types.ts';
import { routeKey } from './cluster-view.ts';

export type RouteWriteMode = 'auto' | 'atomic' | 'revision' | 'plain';

export type RouteWriteMethod = 'atomic' | 'revision' | 'plain';

export interface RouteWriteResult {
  method: RouteWriteMethod;
  /** Routes this call changed (added ones that were absent, removed ones that were present). */
  changed: ExtraRoute[];
  /** 412 answers, or (plain) writes another writer raced: someone else changed the router between our read and our write. */
  conflicts: number;
  /** Plain writes only: routes another writer's racing update dropped, put back. */
  restored?: ExtraRoute[];
}

export interface RouteWriterOptions {
  /** auto (default) picks the strongest method Neutron advertises; the others force one. */
  mode?: RouteWriteMode;
  /** Full-list attempts before giving up on a busy router (default 5). */
  maxAttempts?: number;
}

/** The limit in Neutron's RoutesExhausted message ("exceeds the maximum 30"), when err is one. */
export function routeLimitOf(err: unknown): number | undefined {
  if (!isOpenStackError(err, 400, 'RoutesExhausted')) return undefined;
  const m = /maximum (\d+)/.exec(err.details.faultMessage ?? err.message);
  return m ? Number(m[1]) : undefined;
}

/** The write method for a Neutron with these extension aliases (pure). */
export function pickRouteWriteMethod(aliases: ReadonlySet<string>): RouteWriteMethod {
  if (aliases.has('extraroute-atomic')) return 'atomic';
  if (aliases.has('revision-if-match')) return 'revision';
  return 'plain';
}

export class RouteWriter {
  readonly #neutron: NeutronApi;
  readonly #mode: RouteWriteMode;
  readonly #maxAttempts: number;
  #method: RouteWriteMethod | undefined;

  constructor(neutron: NeutronApi, opts: RouteWriterOptions = {}) {
    this.#neutron = neutron;
    this.#mode = opts.mode ?? 'auto';
    this.#maxAttempts = opts.maxAttempts ?? 5;
  }

  remove(routerId: string, routes: readonly ExtraRoute[], signal?: AbortSignal): Promise<RouteWriteResult> {
    return this.#write(routerId, routes, 'remove', signal);
  }

  add(routerId: string, routes: readonly ExtraRoute[], signal?: AbortSignal): Promise<RouteWriteResult> {
    return this.#write(routerId, routes, 'add', signal);
  }

  /** The method writes use (asks Neutron once: a cloud does not lose an API extension between two cycles). */
  async method(signal?: AbortSignal): Promise<RouteWriteMethod> {
    if (this.#mode !== 'auto') return this.#mode;
    this.#method ??= pickRouteWriteMethod(new Set((await this.#neutron.listExtensions({ signal })).map((e) => e.alias)));
    return this.#method;
  }

  async #write(routerId: string, routes: readonly ExtraRoute[], op: 'add' | 'remove', signal?: AbortSignal): Promise<RouteWriteResult> {
    const method = await this.method(signal);
    if (routes.length === 0) return { method, changed: [], conflicts: 0 };
    const before = await this.#read(routerId, signal);
    if (method === 'atomic') {
      signal?.throwIfAborted();
      const after =
        op === 'add'
          ? await this.#neutron.addExtraRoutes(routerId, [...routes], { signal })
          : await this.#neutron.removeExtraRoutes(routerId, [...routes], { signal });
      return { method, changed: diff(before.routes, after.routes, op, routes), conflicts: 0 };
    }
    if (method === 'plain') return this.#plain(routerId, before, routes, op, signal);
    let conflicts = 0;
    let router = before;
    for (let attempt = 1; ; attempt++) {
      const next = nextList(router.routes, routes, op);
      if (next.length === router.routes.length) return { method, changed: [], conflicts };
      try {
        signal?.throwIfAborted();
        const after = await this.#neutron.updateRoutes(routerId, next, { ifRevision: router.revision_number, signal });
        return { method, changed: diff(router.routes, after.routes, op, routes), conflicts };
      } catch (err) {
        if (!isOpenStackError(err, 412)) throw err;
        conflicts++;
        if (attempt >= this.#maxAttempts) {
          throw new KubewardError('E_CONFLICT', `router ${routerId} changed under us ${conflicts} times in a row; giving up this cycle`, { cause: err });
        }
      }
      router = await this.#read(routerId, signal);
    }
  }

  async #plain(routerId: string, before: Router, routes: readonly ExtraRoute[], op: 'add' | 'remove', signal?: AbortSignal): Promise<RouteWriteResult> {
    const next = nextList(before.routes, routes, op);
    if (next.length === before.routes.length) return { method: 'plain', changed: [], conflicts: 0 };
    signal?.throwIfAborted();
    const written = await this.#neutron.updateRoutes(routerId, next, { signal });
    // Every write bumps revision_number once: a bigger jump means another writer got in between.
    const raced =
      typeof written.revision_number === 'number' && typeof before.revision_number === 'number' && written.revision_number > before.revision_number + 1;
    const restored: ExtraRoute[] = [];
    let current = await this.#read(routerId, signal);
    for (let attempt = 1; attempt <= this.#maxAttempts; attempt++) {
      const have = new Set(current.routes.map(routeKey));
      const lost = next.filter((r) => !have.has(routeKey(r)) && (op === 'add' || !routes.some((x) => routeKey(x) === routeKey(r))));
      if (lost.length === 0) break;
      const wanted = new Set(routes.map(routeKey));
      const merged = [...current.routes.filter((r) => op === 'add' || !wanted.has(routeKey(r))), ...lost];
      signal?.throwIfAborted();
      current = await this.#neutron.updateRoutes(routerId, merged, { signal });
      restored.push(...lost);
    }
    return { method: 'plain', changed: diff(before.routes, current.routes, op, routes), conflicts: raced || restored.length ? 1 : 0, restored };
  }

  async #read(routerId: string, signal?: AbortSignal): Promise<Router> {
    const router = await this.#neutron.getRouter(routerId, { signal });
    if (!router) throw new KubewardError('E_NOT_FOUND', `router ${routerId} does not exist`);
    return router;
  }
}

function nextList(current: readonly ExtraRoute[], routes: readonly ExtraRoute[], op: 'add' | 'remove'): ExtraRoute[] {
  const wanted = new Set(routes.map(routeKey));
  return op === 'add'
    ? [...current, ...routes.filter((r) => !current.some((o) => routeKey(o) === routeKey(r)))]
    : current.filter((r) => !wanted.has(routeKey(r)));
}

/** The requested routes that this write changed (others' concurrent changes are not ours to report). */
function diff(before: readonly ExtraRoute[], after: readonly ExtraRoute[], op: 'add' | 'remove', requested: readonly ExtraRoute[]): ExtraRoute[] {
  const asked = new Set(requested.map(routeKey));
  const keys = new Set((op === 'add' ? before : after).map(routeKey));
  return (op === 'add' ? after : before).filter((r) => asked.has(routeKey(r)) && !keys.has(routeKey(r)));
}
