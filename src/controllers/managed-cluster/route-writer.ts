// Changes a router's routes without losing anyone else's, with the strongest method this Neutron
// offers (read from its extension list, once per writer):
// - extraroute-atomic: add_extraroutes / remove_extraroutes change only the routes named;
// - revision-if-match: a full-list PUT with `If-Match: revision_number=N`, read again and retried on 412.
//   Without the extension Neutron ignores the header, so it is only sent when advertised;
// - neither (plain): a full-list PUT computed from a read that a second read just before the PUT
//   confirms (same revision). A router that moved on between the two is read again and the list
//   computed anew, so a route another writer removed or added meanwhile is neither put back nor
//   dropped. The PUT's answer tells whether a writer still got in during the last round trip (the
//   revision moved by more than our one write): counted as a conflict and logged, never "repaired"
//   by writing other writers' routes back, since a route missing after our write is one its owner
//   removed. What the plain method cannot close is that last round trip: Neutron offers no
//   conditional write without the two extensions.
// The signal is the leader's fence: it is checked before, and passed into, every write, so a writer
// whose leader lost its lease sends nothing more.
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
  /** Plain writes only: a writer got in between the last read and our write; its change may be lost. */
  raced?: boolean;
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
    let base = before;
    let conflicts = 0;
    for (let attempt = 1; ; attempt++) {
      const next = nextList(base.routes, routes, op);
      if (next.length === base.routes.length) return { method: 'plain', changed: [], conflicts };
      // The list is written only while the router is still the one it was computed from: another
      // writer's change since then (a removal above all) would otherwise be undone by this PUT.
      const fresh = await this.#read(routerId, signal);
      if (!sameState(fresh, base)) {
        conflicts++;
        if (attempt >= this.#maxAttempts)
          throw new KubewardError('E_CONFLICT', `router ${routerId} changed under us ${conflicts} times in a row; giving up this cycle`);
        base = fresh;
        continue;
      }
      signal?.throwIfAborted();
      const written = await this.#neutron.updateRoutes(routerId, next, { signal });
      // Every write bumps revision_number once: a bigger jump means another writer got in within the
      // last round trip. Reported, not repaired: writing its routes back could undo its removal.
      const raced =
        typeof written.revision_number === 'number' && typeof fresh.revision_number === 'number' && written.revision_number > fresh.revision_number + 1;
      return { method: 'plain', changed: diff(fresh.routes, written.routes, op, routes), conflicts: conflicts + (raced ? 1 : 0), raced };
    }
  }

  async #read(routerId: string, signal?: AbortSignal): Promise<Router> {
    const router = await this.#neutron.getRouter(routerId, { signal });
    if (!router) throw new KubewardError('E_NOT_FOUND', `router ${routerId} does not exist`);
    return router;
  }
}

/** Same revision, or (a Neutron without revisions) the same routes. */
function sameState(a: Router, b: Router): boolean {
  if (typeof a.revision_number === 'number' && typeof b.revision_number === 'number') return a.revision_number === b.revision_number;
  const keys = new Set(a.routes.map(routeKey));
  return a.routes.length === b.routes.length && b.routes.every((r) => keys.has(routeKey(r)));
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
