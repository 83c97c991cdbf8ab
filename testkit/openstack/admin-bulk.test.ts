// The bulk admin API: one request makes N working tenants (each user logs in and sees only its own
// servers, router and group), bad specs are refused with the field named, and onRequest sees projects.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ApiFault } from './http-kit.ts';
import { parseBulkSpec, type BulkProject } from './admin-bulk.ts';
import { OpenStackEmulator } from './openstack-emulator.ts';

test('parseBulkSpec fills defaults and keeps what is given', () => {
  assert.deepEqual(parseBulkSpec({ count: 2, prefix: 'b' }), {
    count: 2,
    prefix: 'b',
    start: 0,
    servers: 3,
    serverName: '{project}-server-{n}',
    serverMetadata: {},
    serverTags: [],
    clusterCidr: '100.100.0.0/16',
    orphanRoutes: 0,
  });
  assert.equal(parseBulkSpec({ count: 1, prefix: 'x-1', servers: 0, serverName: 'kks-{project}-small-{n}' }).serverName, 'kks-{project}-small-{n}');
});

test('parseBulkSpec refuses each bad field with a 400 that names it', () => {
  const cases: [unknown, RegExp][] = [
    [undefined, /count/],
    [{ count: 0, prefix: 'b' }, /count/],
    [{ count: 5001, prefix: 'b' }, /count/],
    [{ count: 1.5, prefix: 'b' }, /count/],
    [{ count: 1, prefix: 'B' }, /prefix/],
    [{ count: 1, prefix: 'b-' }, /prefix/],
    [{ count: 1, prefix: 'b', servers: 51 }, /servers/],
    [{ count: 1, prefix: 'b', serverName: 'no-number' }, /serverName/],
    [{ count: 1, prefix: 'b', serverName: '{n}/../x' }, /serverName/],
    [{ count: 1, prefix: 'b', serverMetadata: { a: 1 } }, /serverMetadata/],
    [{ count: 1, prefix: 'b', serverTags: [''] }, /serverTags/],
    [{ count: 1, prefix: 'b', clusterCidr: '100.100.0.1/16' }, /clusterCidr/],
    [{ count: 1, prefix: 'b', clusterCidr: '100.100.0.0/24' }, /clusterCidr/],
    [{ count: 1, prefix: 'b', clusterCidr: '100.100.0.0/22', servers: 4, orphanRoutes: 1 }, /fewer \/24s/],
    [{ count: 10, prefix: 'b', start: 65_530 }, /start/],
  ];
  for (const [body, field] of cases) {
    assert.throws(
      () => parseBulkSpec(body),
      (err: unknown) => err instanceof ApiFault && err.status === 400 && field.test(err.message),
      JSON.stringify(body),
    );
  }
});

test('parseBulkSpec: any prefix it accepts is a safe name, any count it accepts is in range (property)', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 50 }), fc.integer({ min: -10, max: 6000 }), (prefix, count) => {
      let spec;
      try {
        spec = parseBulkSpec({ prefix, count });
      } catch (err) {
        assert.ok(err instanceof ApiFault && err.status === 400);
        return;
      }
      assert.match(spec.prefix, /^[a-z0-9][a-z0-9-]*$/);
      assert.ok(spec.prefix.length <= 40 && !spec.prefix.endsWith('-'));
      assert.ok(spec.count >= 1 && spec.count <= 5000);
    }),
  );
});

describe('POST /_admin/bulk/projects', () => {
  const seen: { path: string; projectId?: string }[] = [];
  const emu = new OpenStackEmulator({ onRequest: (e, m) => void seen.push({ path: e.path, projectId: m.projectId }) });
  before(() => emu.start());
  after(() => emu.close());

  const call = async (method: string, path: string, opts: { token?: string; body?: unknown } = {}) => {
    const res = await fetch(`${emu.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(opts.token ? { 'x-auth-token': opts.token } : {}) },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
  };
  const login = async (p: BulkProject): Promise<string> => {
    const res = await call('POST', '/identity/v3/auth/tokens', {
      body: {
        auth: {
          identity: { methods: ['password'], password: { user: { name: p.userName, domain: { name: 'Default' }, password: p.password } } },
          scope: { project: { name: p.projectName, domain: { name: 'Default' } } },
        },
      },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.headers.get('x-subject-token')!;
  };

  let made: BulkProject[];
  test('makes N tenants whose users log in and see their own servers, router routes and group', async () => {
    const res = await call('POST', '/_admin/bulk/projects', {
      body: { count: 3, prefix: 'bench', servers: 2, serverName: 'kks-{project}-small-{n}', serverTags: ['kubeward:cluster={project}'] },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    made = res.body.projects as BulkProject[];
    assert.deepEqual(
      made.map((p) => p.projectName),
      ['bench-0', 'bench-1', 'bench-2'],
    );
    const p1 = made[1]!;
    const token = await login(p1);
    const servers = (await call('GET', '/compute/v2.1/servers/detail', { token })).body.servers as {
      id: string;
      name: string;
      status: string;
      tags?: string[];
      addresses: Record<string, { addr: string }[]>;
    }[];
    assert.deepEqual(
      servers
        .map((s) => [
          s.name,
          s.status,
          Object.values(s.addresses)
            .flat()
            .map((a) => a.addr),
        ])
        .sort(),
      [
        ['kks-bench-1-small-0', 'ACTIVE', ['10.0.1.10']],
        ['kks-bench-1-small-1', 'ACTIVE', ['10.0.1.11']],
      ],
    );
    const router = (await call('GET', `/network/v2.0/routers/${p1.routerId}`, { token })).body.router as { routes: unknown[] };
    assert.deepEqual(router.routes, [
      { destination: '100.100.0.0/24', nexthop: '10.0.1.10' },
      { destination: '100.100.1.0/24', nexthop: '10.0.1.11' },
    ]);
    const groups = (await call('GET', '/network/v2.0/security-groups?name=bench-1-sg', { token })).body.security_groups as {
      id: string;
      security_group_rules: { protocol: string; remote_ip_prefix: string }[];
    }[];
    assert.equal(groups.length, 1);
    assert.deepEqual(
      groups[0]!.security_group_rules
        .filter((r) => r.remote_ip_prefix === '100.100.0.0/16')
        .map((r) => r.protocol)
        .sort(),
      ['icmp', 'tcp', 'udp'],
    );
    // Another tenant's router is not visible with this token.
    assert.equal((await call('GET', `/network/v2.0/routers/${made[0]!.routerId}`, { token })).status, 404);
    assert.ok(
      seen.some((s) => s.path.includes(p1.routerId) && s.projectId === p1.projectId),
      'onRequest got the project of the token',
    );
    assert.ok(seen.filter((s) => s.path.endsWith('/auth/tokens')).every((s) => s.projectId === undefined));
  });

  test('a taken name is refused as a whole (409) and nothing of the batch is created', async () => {
    const before = emu.store.projects.size;
    const res = await call('POST', '/_admin/bulk/projects', { body: { count: 3, prefix: 'bench', start: 2 } });
    assert.equal(res.status, 409);
    assert.match(JSON.stringify(res.body), /bench-2 exists/);
    assert.equal(emu.store.projects.size, before);
  });

  test('a thousand tenants in one request, with distinct subnets and orphan routes on request', async () => {
    const res = await call('POST', '/_admin/bulk/projects', { body: { count: 1000, prefix: 'many', servers: 1, orphanRoutes: 1 } });
    assert.equal(res.status, 201);
    const ps = res.body.projects as BulkProject[];
    assert.equal(ps.length, 1000);
    assert.equal(new Set(ps.map((p) => p.subnetCidr)).size, 1000);
    assert.equal(ps[999]!.subnetCidr, '10.3.231.0/24');
    assert.deepEqual(ps[5]!.routes, [
      { destination: '100.100.0.0/24', nexthop: '10.0.5.10' },
      { destination: '100.100.1.0/24', nexthop: '10.0.5.250' },
    ]);
    assert.equal(emu.store.routers.get(ps[5]!.routerId)!.routes.length, 2);
  });
});
