// Emulated Cinder v3: volumes with status transitions (creating → available, deleting → gone or
// error_deleting, each of which may be delayed or stuck), limit/marker paging with volumes_links,
// admin all_tenants listing. As in Cinder, a volume in deleting or error_deleting refuses a plain
// delete (400): only an admin's force-delete or reset-state moves it on.
import { ApiFault, RouteTable, isoMicros, ok, type Ctx } from './http-kit.ts';
import type { EmulatorStore, VolumeRec } from './emulator-store.ts';

type Obj = Record<string, unknown>;

const DELETABLE = new Set(['available', 'error', 'error_restoring', 'error_extending', 'error_managing']);

function view(v: VolumeRec, ctx: Ctx, detail: boolean): Obj {
  const links = [{ rel: 'self', href: `${ctx.baseUrl}/volume/v3/${v.project_id}/volumes/${v.id}` }];
  if (!detail) return { id: v.id, name: v.name, links };
  return {
    id: v.id,
    name: v.name,
    status: v.status,
    size: v.size,
    description: v.description,
    volume_type: v.volume_type,
    metadata: v.metadata,
    attachments: v.attachments,
    availability_zone: 'nova',
    bootable: 'false',
    encrypted: false,
    multiattach: false,
    links,
    created_at: isoMicros(v.created_at),
    updated_at: isoMicros(v.updated_at),
    user_id: v.user_id,
    'os-vol-tenant-attr:tenant_id': v.project_id,
    snapshot_id: null,
    source_volid: null,
    replication_status: null,
    consistencygroup_id: null,
  };
}

export function cinderRoutes(store: EmulatorStore): RouteTable {
  const t = new RouteTable();
  const checkProject = (ctx: Ctx) => {
    if (ctx.params.project !== ctx.projectId) throw new ApiFault(400, 'badRequest', 'Malformed request url');
  };
  const get = (ctx: Ctx): VolumeRec => {
    checkProject(ctx);
    const v = store.volumes.get(ctx.params.id!);
    if (!v || (!ctx.isAdmin && v.project_id !== ctx.projectId)) throw new ApiFault(404, 'itemNotFound', `Volume ${ctx.params.id} could not be found.`);
    return v;
  };
  for (const detail of [false, true]) {
    const path = detail ? '/volumes/detail' : '/volumes';
    t.add('GET', `/:project${path}`, (ctx) => {
      checkProject(ctx);
      return ok(listVolumes(store, ctx, detail, path));
    });
  }
  t.add('POST', '/:project/volumes', (ctx) => {
    checkProject(ctx);
    const b = ((ctx.body as Obj | undefined)?.volume ?? {}) as Obj;
    const size = Number(b.size);
    if (!Number.isInteger(size) || size < 1) throw new ApiFault(400, 'badRequest', `Invalid input for field/attribute size. Value: ${String(b.size)}.`);
    const now = store.clock.now();
    const v: VolumeRec = {
      id: store.newId(),
      name: typeof b.name === 'string' ? b.name : null,
      project_id: ctx.projectId,
      user_id: ctx.userId,
      size,
      status: 'creating',
      created_at: now,
      updated_at: now,
      description: typeof b.description === 'string' ? b.description : null,
      metadata: (b.metadata ?? {}) as Record<string, string>,
      attachments: [],
      volume_type: '__DEFAULT__',
    };
    store.volumes.set(v.id, v);
    store.schedule('volume-create', v.id, store.timings.volumeCreateMs, () => Object.assign(v, { status: 'available', updated_at: store.clock.now() }));
    return ok({ volume: view(v, ctx, true) }, 202);
  });
  t.add('GET', '/:project/volumes/:id', (ctx) => ok({ volume: view(get(ctx), ctx, true) }));
  t.add('DELETE', '/:project/volumes/:id', (ctx) => {
    const v = get(ctx);
    if (!DELETABLE.has(v.status) || v.attachments.length) {
      throw new ApiFault(
        400,
        'badRequest',
        'Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer.',
      );
    }
    Object.assign(v, { status: 'deleting', updated_at: store.clock.now() });
    store.schedule(
      'volume-delete',
      v.id,
      store.timings.volumeDeleteMs,
      () => store.volumes.delete(v.id),
      () => Object.assign(v, { status: 'error_deleting', updated_at: store.clock.now() }),
    );
    return { status: 202 };
  });
  return t;
}

function listVolumes(store: EmulatorStore, ctx: Ctx, detail: boolean, path: string): Obj {
  const all = ctx.isAdmin && /^(1|true|yes)$/i.test(ctx.query.get('all_tenants') ?? '');
  const project = ctx.query.get('project_id');
  const status = ctx.query.get('status');
  const name = ctx.query.get('name');
  const sorted = [...store.volumes.values()]
    .filter((v) => (all ? !project || v.project_id === project : v.project_id === ctx.projectId))
    .filter((v) => (!status || v.status === status) && (!name || v.name === name))
    .sort((a, b) => b.created_at - a.created_at || b.id.localeCompare(a.id));
  const marker = ctx.query.get('marker');
  let start = 0;
  if (marker) {
    start = sorted.findIndex((v) => v.id === marker) + 1;
    if (start === 0) throw new ApiFault(404, 'itemNotFound', `Marker ${marker} could not be found.`);
  }
  const limit = Math.min(Number(ctx.query.get('limit') ?? store.limits.maxPageSize), store.limits.maxPageSize);
  const page = sorted.slice(start, start + limit);
  const body: Obj = { volumes: page.map((v) => view(v, ctx, detail)) };
  if (page.length === limit) {
    const q = new URLSearchParams(ctx.query);
    q.set('limit', String(limit));
    q.set('marker', page.at(-1)!.id);
    body.volumes_links = [{ rel: 'next', href: `${ctx.baseUrl}/volume/v3/${ctx.projectId}${path}?${q}` }];
  }
  return body;
}
