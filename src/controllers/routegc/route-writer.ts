// Changes a router's routes without losing anyone else's: Neutron's atomic add/remove_extraroutes
// when the extraroute-atomic extension exists, otherwise a full-list PUT guarded by the router's
// revision_number (If-Match), read again and retried when Neutron answers 412.
import { KubewardError } from '../../base/errors.ts';
import type { NeutronApi } from '../../clients/openstack/openstack-client.ts';
import { isOpenStackError } from '../../clients/openstack/openstack-error.ts';
import type { ExtraRoute } from '../../clients/openstack/openstack-types.ts';
import { routeKey } from './decide-routegc.ts';

export type RouteWriteMode = 'auto' | 'atomic' | 'revision';

export interface RouteWriteResult {
  method: 'atomic' | 'revision';
  /** Routes this call changed (added ones that were absent, removed ones that were present). */
  changed: ExtraRoute[];
  /** 412 answers: someone else changed the router between our read and our write. */
  conflicts: number;
}

export interface RouteWriterOptions {
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

export class RouteWriter {
  readonly #neutron: NeutronApi;
  readonly #mode: RouteWriteMode;
  readonly #maxAttempts: number;
  #atomic: boolean | undefined;

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

  async #useAtomic(signal?: AbortSignal): Promise<boolean> {
    if (this.#mode !== 'auto') return this.#mode === 'atomic';
    // Asked once per writer: a cloud does not lose an API extension between two cycles.
    this.#atomic ??= (await this.#neutron.listExtensions({ signal })).some((e) => e.alias === 'extraroute-atomic');
    return this.#atomic;
  }

  async #write(routerId: string, routes: readonly ExtraRoute[], op: 'add' | 'remove', signal?: AbortSignal): Promise<RouteWriteResult> {
    if (routes.length === 0) return { method: 'atomic', changed: [], conflicts: 0 };
    const before = await this.#neutron.getRouter(routerId, { signal });
    if (!before) throw new KubewardError('E_NOT_FOUND', `router ${routerId} does not exist`);
    if (await this.#useAtomic(signal)) {
      const after = op === 'add' ? await this.#neutron.addExtraRoutes(routerId, [...routes], { signal }) : await this.#neutron.removeExtraRoutes(routerId, [...routes], { signal });
      return { method: 'atomic', changed: diff(before.routes, after.routes, op, routes), conflicts: 0 };
    }
    let conflicts = 0;
    let router = before;
    for (let attempt = 1; ; attempt++) {
      const wanted = new Set(routes.map(routeKey));
      const next = op === 'add'
        ? [...router.routes, ...routes.filter((r) => !router.routes.some((o) => routeKey(o) === routeKey(r)))]
        : router.routes.filter((r) => !wanted.has(routeKey(r)));
      if (next.length === router.routes.length) return { method: 'revision', changed: [], conflicts };
      try {
        const after = await this.#neutron.updateRoutes(routerId, next, { ifRevision: router.revision_number, signal });
        return { method: 'revision', changed: diff(router.routes, after.routes, op, routes), conflicts };
      } catch (err) {
        if (!isOpenStackError(err, 412)) throw err;
        conflicts++;
        if (attempt >= this.#maxAttempts) {
          throw new KubewardError('E_CONFLICT', `router ${routerId} changed under us ${conflicts} times in a row; giving up this cycle`, { cause: err });
        }
      }
      const fresh = await this.#neutron.getRouter(routerId, { signal });
      if (!fresh) throw new KubewardError('E_NOT_FOUND', `router ${routerId} does not exist`);
      router = fresh;
    }
  }
}

/** The requested routes that this write changed (others' concurrent changes are not ours to report). */
function diff(before: readonly ExtraRoute[], after: readonly ExtraRoute[], op: 'add' | 'remove', requested: readonly ExtraRoute[]): ExtraRoute[] {
  const asked = new Set(requested.map(routeKey));
  const keys = new Set((op === 'add' ? before : after).map(routeKey));
  return (op === 'add' ? after : before).filter((r) => asked.has(routeKey(r)) && !keys.has(routeKey(r)));
}
