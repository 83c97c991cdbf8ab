// Emulated Keystone v3: password and application-credential tokens with a catalog, version discovery,
// and the domain/user/role-assignment calls flight uses.
import { ApiFault, RouteTable, isoMicros, noContent, ok, type Ctx, type Reply } from './http-kit.ts';
import type { EmulatorStore, TokenRec, UserRec } from './emulator-store.ts';

type Obj = Record<string, unknown>;

const authFailed = () => new ApiFault(401, 'Unauthorized', 'The request you have made requires authentication.');

export function catalogFor(baseUrl: string, projectId: string): unknown[] {
  const entry = (type: string, name: string, url: string) => ({
    type,
    name,
    id: `${name}-service`,
    endpoints: (['public', 'internal', 'admin'] as const).map((iface) => ({
      id: `${name}-${iface}`,
      interface: iface,
      region: 'RegionOne',
      region_id: 'RegionOne',
      url,
    })),
  });
  return [
    entry('identity', 'keystone', `${baseUrl}/identity/v3`),
    entry('compute', 'nova', `${baseUrl}/compute/v2.1`),
    entry('network', 'neutron', `${baseUrl}/network`),
    entry('block-storage', 'cinderv3', `${baseUrl}/volume/v3/${projectId}`),
    entry('volumev3', 'cinder', `${baseUrl}/volume/v3/${projectId}`),
    entry('load-balancer', 'octavia', `${baseUrl}/load-balancer`),
    entry('image', 'glance', `${baseUrl}/image`),
  ];
}

function findUser(store: EmulatorStore, u: Obj | undefined): UserRec | undefined {
  if (!u) return undefined;
  if (typeof u.id === 'string') return store.users.get(u.id);
  const d = (u.domain ?? {}) as Obj;
  const domainId = typeof d.id === 'string' ? d.id : d.name === 'Default' || d.name === undefined ? 'default' : String(d.name).toLowerCase();
  return [...store.users.values()].find((x) => x.name === u.name && x.domain_id === domainId);
}

function findProjectId(store: EmulatorStore, scope: Obj | undefined): string | undefined {
  const p = scope?.project as Obj | undefined;
  if (!p) return undefined;
  if (typeof p.id === 'string') return store.projects.has(p.id) ? p.id : '';
  const d = (p.domain ?? {}) as Obj;
  const domainId = typeof d.id === 'string' ? d.id : 'default';
  return [...store.projects.values()].find((x) => x.name === p.name && x.domain_id === domainId)?.id ?? '';
}

/** Checks the credentials of POST /v3/auth/tokens and issues a token; throws 401 like Keystone. */
export function issueToken(store: EmulatorStore, body: unknown): TokenRec {
  const auth = ((body as Obj | undefined)?.auth ?? {}) as Obj;
  const identity = (auth.identity ?? {}) as Obj;
  const methods = Array.isArray(identity.methods) ? (identity.methods as string[]) : [];
  let userId: string;
  let projectId: string | undefined;
  let roleIds: string[] | undefined;
  if (methods.includes('application_credential')) {
    const c = (identity.application_credential ?? {}) as Obj;
    const user = findUser(store, c.user as Obj | undefined);
    const cred = typeof c.id === 'string' ? store.appCreds.get(c.id) : [...store.appCreds.values()].find((x) => x.name === c.name && x.userId === user?.id);
    if (!cred || cred.secret !== c.secret || auth.scope) throw authFailed();
    ({ userId, projectId, roleIds } = cred);
  } else if (methods.includes('password')) {
    const pw = ((identity.password ?? {}) as Obj).user as Obj | undefined;
    const user = findUser(store, pw);
    if (!user || !user.enabled || user.password !== pw?.password) throw authFailed();
    userId = user.id;
    projectId = findProjectId(store, auth.scope as Obj | undefined) ?? user.default_project_id;
  } else {
    throw new ApiFault(
      400,
      'Bad Request',
      'Expecting to find identity in auth. The server could not comply with the request since it is either malformed or otherwise incorrect.',
    );
  }
  if (projectId === '') throw authFailed();
  roleIds ??= projectId ? store.projectRoleIds(userId, projectId) : [];
  if (projectId && roleIds.length === 0) throw new ApiFault(401, 'Unauthorized', `User ${userId} has no access to project ${projectId}`);
  const now = store.clock.now();
  const tok: TokenRec = {
    value: `gAAAAA${store.newSecret()}`,
    userId,
    projectId: projectId ?? '',
    roleIds,
    methods,
    issuedAtMs: now,
    expiresAtMs: now + store.timings.tokenLifetimeMs,
  };
  store.tokens.set(tok.value, tok);
  return tok;
}

export function tokenBody(store: EmulatorStore, tok: TokenRec, baseUrl: string): unknown {
  const user = store.users.get(tok.userId)!;
  const project = store.projects.get(tok.projectId);
  const token: Obj = {
    methods: tok.methods,
    user: {
      domain: { id: user.domain_id, name: user.domain_id === 'default' ? 'Default' : user.domain_id },
      id: user.id,
      name: user.name,
      password_expires_at: null,
    },
    audit_ids: [tok.value.slice(-22)],
    expires_at: isoMicros(tok.expiresAtMs) + 'Z',
    issued_at: isoMicros(tok.issuedAtMs) + 'Z',
  };
  if (project) {
    token.project = { domain: { id: project.domain_id, name: 'Default' }, id: project.id, name: project.name };
    token.is_domain = false;
    token.roles = tok.roleIds.map((id) => ({ id, name: store.roles.get(id)?.name }));
    token.catalog = catalogFor(baseUrl, project.id);
  }
  return { token };
}

function requireAdmin(ctx: Ctx): void {
  if (!ctx.isAdmin) throw new ApiFault(403, 'Forbidden', 'You are not authorized to perform the requested action.');
}

export function keystoneRoutes(store: EmulatorStore): RouteTable {
  const t = new RouteTable();
  t.add('POST', '/auth/tokens', (ctx): Reply => {
    const tok = issueToken(store, ctx.body);
    return ok(tokenBody(store, tok, ctx.baseUrl), 201, { 'x-subject-token': tok.value });
  });
  t.add('GET', '/auth/tokens', (ctx) => {
    const subject = store.tokens.get(String(ctx.headers['x-subject-token'] ?? ''));
    if (!subject || subject.expiresAtMs <= store.clock.now()) throw new ApiFault(404, 'Not Found', 'Could not find token.');
    return ok(tokenBody(store, subject, ctx.baseUrl), 200, { 'x-subject-token': subject.value });
  });
  t.add('GET', '/domains', (ctx) => {
    requireAdmin(ctx);
    const name = ctx.query.get('name');
    const domains = [{ id: 'default', name: 'Default', enabled: true, description: 'The default domain' }].filter((d) => !name || d.name === name);
    return ok({ domains, links: { self: `${ctx.baseUrl}/identity/v3/domains`, next: null, previous: null } });
  });
  t.add('GET', '/projects', (ctx) => {
    requireAdmin(ctx);
    const name = ctx.query.get('name');
    return ok({ projects: [...store.projects.values()].filter((p) => !name || p.name === name), links: { next: null, previous: null } });
  });
  t.add('GET', '/users', (ctx) => {
    requireAdmin(ctx);
    const name = ctx.query.get('name');
    const domainId = ctx.query.get('domain_id');
    const users = [...store.users.values()]
      .filter((u) => (!name || u.name === name) && (!domainId || u.domain_id === domainId))
      .map((u) => ({ id: u.id, name: u.name, domain_id: u.domain_id, enabled: u.enabled, default_project_id: u.default_project_id }));
    return ok({ users, links: { next: null, previous: null } });
  });
  t.add('GET', '/roles', (ctx) => {
    const name = ctx.query.get('name');
    return ok({ roles: [...store.roles.values()].filter((r) => !name || r.name === name), links: { next: null, previous: null } });
  });
  t.add('GET', '/projects/:p/users/:u/roles', (ctx) => {
    requireAdmin(ctx);
    assertProjectUser(store, ctx);
    const ids = store.assignments.filter((a) => a.projectId === ctx.params.p && a.userId === ctx.params.u).map((a) => a.roleId);
    return ok({ roles: ids.map((id) => store.roles.get(id)).filter(Boolean) });
  });
  t.add('PUT', '/projects/:p/users/:u/roles/:r', (ctx) => {
    requireAdmin(ctx);
    assertProjectUser(store, ctx);
    if (!store.roles.has(ctx.params.r!)) throw new ApiFault(404, 'Not Found', `Could not find role: ${ctx.params.r}.`);
    const a = { projectId: ctx.params.p!, userId: ctx.params.u!, roleId: ctx.params.r! };
    if (!store.assignments.some((x) => x.projectId === a.projectId && x.userId === a.userId && x.roleId === a.roleId)) store.assignments.push(a);
    return noContent();
  });
  t.add('DELETE', '/projects/:p/users/:u/roles/:r', (ctx) => {
    requireAdmin(ctx);
    const before = store.assignments.length;
    store.assignments = store.assignments.filter((x) => !(x.projectId === ctx.params.p && x.userId === ctx.params.u && x.roleId === ctx.params.r));
    if (store.assignments.length === before) throw new ApiFault(404, 'Not Found', `Could not find role assignment.`);
    return noContent();
  });
  t.add('POST', '/users/:u/application_credentials', (ctx) => {
    if (ctx.params.u !== ctx.userId) requireAdmin(ctx);
    const c = ((ctx.body as Obj | undefined)?.application_credential ?? {}) as Obj;
    const id = store.newId();
    const secret = typeof c.secret === 'string' ? c.secret : store.newSecret();
    const roleIds = store.projectRoleIds(ctx.userId, ctx.projectId);
    store.appCreds.set(id, { id, name: String(c.name ?? id), secret, userId: ctx.params.u!, projectId: ctx.projectId, roleIds });
    return ok(
      { application_credential: { id, name: c.name, secret, project_id: ctx.projectId, roles: roleIds.map((r) => store.roles.get(r)), unrestricted: false } },
      201,
    );
  });
  t.add('DELETE', '/users/:u/application_credentials/:id', (ctx) => {
    if (ctx.params.u !== ctx.userId) requireAdmin(ctx);
    const cred = store.appCreds.get(ctx.params.id!);
    if (!cred || cred.userId !== ctx.params.u) throw new ApiFault(404, 'Not Found', `Could not find Application Credential: ${ctx.params.id}.`);
    store.appCreds.delete(cred.id);
    for (const [value, tok] of store.tokens) if (tok.methods.includes('application_credential') && tok.userId === cred.userId) store.tokens.delete(value);
    return noContent();
  });
  return t;
}

function assertProjectUser(store: EmulatorStore, ctx: Ctx): void {
  if (!store.projects.has(ctx.params.p!)) throw new ApiFault(404, 'Not Found', `Could not find project: ${ctx.params.p}.`);
  if (!store.users.has(ctx.params.u!)) throw new ApiFault(404, 'Not Found', `Could not find user: ${ctx.params.u}.`);
}

/** Seeds what setup.sh's bootstrap creates: domain Default, projects admin/service/demo, users admin and demo. */
export function seedIdentity(store: EmulatorStore): void {
  for (const name of ['admin', 'member', 'reader', 'service']) store.roles.set(`role-${name}`, { id: `role-${name}`, name });
  for (const name of ['admin', 'service', 'demo'])
    store.projects.set(`project-${name}`, { id: `project-${name}`, name, domain_id: 'default', description: '', enabled: true });
  const user = (name: string, password: string, project: string, roles: string[]) => {
    store.users.set(`user-${name}`, { id: `user-${name}`, name, domain_id: 'default', password, default_project_id: `project-${project}`, enabled: true });
    for (const r of roles) store.assignments.push({ userId: `user-${name}`, projectId: `project-${project}`, roleId: `role-${r}` });
  };
  user('admin', 'admin', 'admin', ['admin']);
  user('demo', 'demo', 'demo', ['member', 'reader']);
}
