// routegc against the OpenStack emulator through the real client: R1-R3, R5-R7, dry run, the route
// limit, termination clean-up, a concurrent add during a full-list removal, and faults mid-cycle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock } from '../../src/base/clock.ts';
import { createSilentLogger } from '../../src/base/logger.ts';
import type { NeutronApi } from '../../src/clients/openstack/openstack-client.ts';
import { openStackRouteGcCloud } from '../../src/controllers/routegc/routegc-cloud.ts';
import { RouteGcRunner, type RouteGcTarget } from '../../src/controllers/routegc/routegc-cycle.ts';
import { createRouteGcMetrics } from '../../src/controllers/routegc/routegc-metrics.ts';
import { RouteWriter, routeLimitOf, type RouteWriteMode } from '../../src/controllers/managed-cluster/route-writer.ts';
import { openCloud, type Cloud } from './routegc-fixture.ts';

function runner(c: Cloud, opts: { mode?: RouteWriteMode; neutron?: NeutronApi; target?: Partial<RouteGcTarget> } = {}): RouteGcRunner {
  return new RouteGcRunner(
    {
      cloud: openStackRouteGcCloud(c.os),
      writer: new RouteWriter(opts.neutron ?? c.os.neutron, { mode: opts.mode ?? 'auto' }),
      nodes: c.nodes,
      emit: async (e) => void c.events.push(e),
      metrics: createRouteGcMetrics(c.registry),
      log: createSilentLogger(),
    },
    {
      cluster: 'k1',
      routerId: c.routerId,
      clusterCidr: '100.100.0.0/16',
      identity: { ownerId: 'name:k1', poolPrefixes: [] },
      routeLimit: 30,
      dryRun: false,
      ...opts.target,
    },
  );
}

async function r1(c: Cloud) {
  const s1 = await c.server('kks-k1-a');
  const s2 = await c.server('kks-k1-b');
  c.nodes.nodes = [
    { name: 'n1', addresses: [s1.ip], podCidrs: ['100.100.1.0/24'], instanceId: s1.id },
    { name: 'n2', addresses: [s2.ip], podCidrs: ['100.100.3.0/24'], instanceId: s2.id },
  ];
  await c.os.neutron.updateRoutes(c.routerId, [
    { destination: '100.100.1.0/24', nexthop: s1.ip },
    { destination: '100.100.2.0/24', nexthop: '10.0.0.99' },
    { destination: '100.100.3.0/24', nexthop: s2.ip },
    { destination: '10.200.0.0/16', nexthop: '10.0.0.99' },
    { destination: '100.100.0.0/15', nexthop: '10.0.0.99' },
  ]);
  return { s1, s2 };
}

for (const mode of ['atomic', 'revision'] as const) {
  test(`R1 (${mode}): the orphan goes on the second cycle in one write; foreign and wider routes stay`, async (t) => {
    const c = await openCloud(t);
    const { s1, s2 } = await r1(c);
    const gc = runner(c, { mode });
    c.emu.requests = [];
    await gc.cycle();
    assert.equal(c.count('PUT', `/routers/${c.routerId}`), 0, 'first sighting writes nothing');
    await gc.cycle();
    assert.deepEqual(await c.routes(), [`10.200.0.0/16>10.0.0.99`, `100.100.0.0/15>10.0.0.99`, `100.100.1.0/24>${s1.ip}`, `100.100.3.0/24>${s2.ip}`].sort());
    const writes = c.emu.requests.filter((r) => r.method === 'PUT' && r.path.includes(`/routers/${c.routerId}`));
    assert.equal(writes.length, 1);
    assert.match(writes[0]!.path, mode === 'atomic' ? /remove_extraroutes$/ : /\/routers\/[^/]+$/);
    assert.equal(await c.metric('kubeward_routegc_routes_removed_total'), 1);
    assert.ok(c.events.some((e) => e.reason === 'RemovedOrphanedRoute' && e.message.includes('100.100.2.0/24')));
  });
}

test('R2: a router without routes costs one GET: no Nova call, no write', async (t) => {
  const c = await openCloud(t);
  c.emu.requests = [];
  await runner(c).cycle();
  assert.equal(c.count('GET', `/routers/${c.routerId}`), 1);
  assert.equal(c.count('GET', '/servers'), 0);
  assert.equal(c.count('PUT', '/routers'), 0);
});

test('R3 and Nova failing mid-cycle: no write, the failure is counted, a later cycle finishes the job', async (t) => {
  const c = await openCloud(t);
  await r1(c);
  const gc = runner(c);
  await gc.cycle();
  const fault = c.emu.addFault({ service: 'compute', path: '^/servers/detail', status: 500 });
  await assert.rejects(gc.cycle(), /500/);
  assert.equal(c.count('PUT', '/remove_extraroutes'), 0);
  assert.equal(await c.metric('kubeward_routegc_failed_cycles_total'), 1);
  c.emu.faults.remove(fault.id);
  await gc.cycle();
  assert.ok(!(await c.routes()).some((r) => r.startsWith('100.100.2.0/24')), 'removed once Nova answered again');
});

test('Neutron failing on the write: the router is unchanged and the next cycle removes the confirmed orphan at once', async (t) => {
  const c = await openCloud(t);
  await r1(c);
  const gc = runner(c);
  await gc.cycle();
  const fault = c.emu.addFault({ service: 'network', method: 'PUT', path: 'remove_extraroutes', status: 503 });
  await assert.rejects(gc.cycle(), /503/);
  assert.equal((await c.routes()).length, 5, 'nothing half-done');
  c.emu.faults.remove(fault.id);
  const result = await gc.cycle();
  assert.deepEqual(
    result.removed.map((f) => f.route.destination),
    ['100.100.2.0/24'],
  );
});

test('plain writes: a full-list PUT that fails is sent once, not resent by the client; the next cycle reads again and writes', async (t) => {
  const c = await openCloud(t);
  await r1(c);
  const gc = runner(c, { mode: 'plain' });
  await gc.cycle();
  const put = `/routers/${c.routerId}`;
  const before = c.count('PUT', put);
  const fault = c.emu.addFault({ service: 'network', method: 'PUT', path: `^/routers/${c.routerId}$`, status: 502 });
  await assert.rejects(gc.cycle(), /502/);
  assert.equal(c.count('PUT', put) - before, 1, 'a resend would write a list read before the failure over what changed since');
  c.emu.faults.remove(fault.id);
  const result = await gc.cycle();
  assert.deepEqual(
    result.removed.map((f) => f.route.destination),
    ['100.100.2.0/24'],
  );
  assert.equal(c.count('PUT', put) - before, 2);
});

test('R5: of a duplicate pair the route to the Node owning the pod CIDR stays, the other goes after two cycles', async (t) => {
  const c = await openCloud(t);
  const s1 = await c.server('kks-k1-a');
  const s2 = await c.server('kks-k1-b');
  c.nodes.nodes = [
    { name: 'n1', addresses: [s1.ip], podCidrs: ['100.100.1.0/24'], instanceId: s1.id },
    { name: 'n2', addresses: [s2.ip], podCidrs: ['100.100.4.0/24'], instanceId: s2.id },
  ];
  await c.os.neutron.updateRoutes(c.routerId, [
    { destination: '100.100.4.0/24', nexthop: s1.ip },
    { destination: '100.100.4.0/24', nexthop: s2.ip },
  ]);
  const gc = runner(c);
  await gc.cycle();
  assert.equal((await c.routes()).length, 2);
  await gc.cycle();
  assert.deepEqual(await c.routes(), [`100.100.4.0/24>${s2.ip}`]);
  assert.ok(c.events.some((e) => e.reason === 'RemovedDuplicateRoute'));
});

test('R6: a route the cloud controller adds between our read and our write survives the full-list removal', async (t) => {
  const c = await openCloud(t);
  await r1(c);
  let raced = false;
  // The race, made certain: just before our guarded PUT, another client adds a route.
  const updateRoutes = async (...args: Parameters<NeutronApi['updateRoutes']>) => {
    if (!raced) {
      raced = true;
      await c.os.neutron.addExtraRoutes(c.routerId, [{ destination: '100.100.5.0/24', nexthop: '10.0.0.55' }]);
    }
    return c.os.neutron.updateRoutes(...args);
  };
  const real = c.os.neutron;
  const racing = new Proxy(real, {
    get: (target, prop) => (prop === 'updateRoutes' ? updateRoutes : (Reflect.get(target, prop) as (...a: unknown[]) => unknown).bind(target)),
  });
  const gc = runner(c, { mode: 'revision', neutron: racing });
  await gc.cycle();
  const result = await gc.cycle();
  assert.equal(result.conflicts, 1, 'Neutron refused the stale write with 412');
  const routes = await c.routes();
  assert.ok(routes.includes('100.100.5.0/24>10.0.0.55'), 'the concurrent add is kept');
  assert.ok(!routes.some((r) => r.startsWith('100.100.2.0/24')), 'the orphan is still removed');
  assert.equal(await c.metric('kubeward_routegc_conflicts_total'), 1);
});

test('R7: Nova answering an empty list while Nodes exist makes routegc refuse and say so', async (t) => {
  const c = await openCloud(t);
  await c.os.neutron.updateRoutes(c.routerId, [{ destination: '100.100.1.0/24', nexthop: '10.0.0.11' }]);
  c.nodes.nodes = [{ name: 'n1', addresses: ['10.0.0.11'], podCidrs: ['100.100.1.0/24'], instanceId: 'gone?' }];
  const gc = runner(c);
  for (let i = 0; i < 3; i++) await gc.cycle();
  assert.equal((await c.routes()).length, 1);
  assert.equal(c.count('PUT', '/remove_extraroutes'), 0);
  assert.ok(c.events.some((e) => e.reason === 'RouteGCRefused' && /empty while 1 Node/.test(e.message)));
  assert.equal(await c.metric('kubeward_routegc_refused_cycles_total'), 3);
});

test('dry run: the would-be removals are recorded and nothing is written', async (t) => {
  const c = await openCloud(t);
  await r1(c);
  const gc = runner(c, { target: { dryRun: true } });
  c.emu.requests = [];
  for (let i = 0; i < 3; i++) await gc.cycle();
  assert.equal(c.emu.requests.filter((r) => r.method !== 'GET' && !r.path.includes('/auth/tokens')).length, 0, 'only reads');
  assert.equal((await c.routes()).length, 5);
  assert.equal(await c.metric('kubeward_routegc_routes_would_remove_total'), 2, 'cycles 2 and 3');
  assert.ok(c.events.some((e) => e.reason === 'RouteWouldBeRemoved' && e.message.includes('100.100.2.0/24')));
});

test('the route limit: a warning once the router nears max_routes, and the limit read from RoutesExhausted', async (t) => {
  const c = await openCloud(t, { maxRoutes: 10 });
  const s1 = await c.server('kks-k1-a');
  c.nodes.nodes = [{ name: 'n1', addresses: [s1.ip], podCidrs: [], instanceId: s1.id }];
  await c.os.neutron.updateRoutes(
    c.routerId,
    Array.from({ length: 8 }, (_, i) => ({ destination: `100.100.${i}.0/24`, nexthop: s1.ip })),
  );
  const gc = runner(c, { target: { routeLimit: 10 } });
  await gc.cycle();
  await gc.cycle();
  assert.equal(c.events.filter((e) => e.reason === 'RouteLimitApproaching').length, 1, 'one warning, not one per cycle');
  const err = await new RouteWriter(c.os.neutron)
    .add(
      c.routerId,
      [10, 11, 12].map((i) => ({ destination: `100.100.${i}.0/24`, nexthop: s1.ip })),
    )
    .catch((e: unknown) => e);
  assert.equal(routeLimitOf(err), 10);
});

test('termination: every route in the cluster CIDR is removed and waited for; foreign routes stay', async (t) => {
  const c = await openCloud(t);
  await r1(c);
  const left = await runner(c).removeAll(systemClock, { timeoutMs: 10_000, pollMs: 50 });
  assert.deepEqual(left, []);
  assert.deepEqual(await c.routes(), ['10.200.0.0/16>10.0.0.99', '100.100.0.0/15>10.0.0.99']);
  assert.equal(await c.metric('kubeward_routegc_routes_removed_total'), 3);
});

test('termination refuses, as a cycle does, when the readable Nodes show the cluster CIDR wrong or far too wide: nothing written', async (t) => {
  for (const [podCidrs, cidr, code] of [
    [['100.100.1.0/24', '10.244.3.0/24'], '100.100.0.0/16', 'PodCIDROutsideClusterCIDR'],
    [['100.100.1.0/24', '100.100.3.0/24'], '100.64.0.0/10', 'ClusterCIDRTooWide'],
  ] as const) {
    const c = await openCloud(t);
    await r1(c);
    c.nodes.nodes = c.nodes.nodes.map((n, i) => ({ ...n, podCidrs: [podCidrs[i]!] }));
    const before = await c.routes();
    const puts = c.count('PUT', '/routers/');
    const left = await runner(c, { target: { clusterCidr: cidr } }).removeAll(systemClock, { timeoutMs: 10_000, pollMs: 50 });
    assert.ok(left.length > 0, `${code}: the routes are reported left`);
    assert.deepEqual(await c.routes(), before, `${code}: the router is unchanged`);
    assert.equal(c.count('PUT', '/routers/'), puts, `${code}: no write`);
    const refused = c.events.filter((e) => e.reason === 'RouteGCRefused');
    assert.equal(refused.length, 1, `${code}: said once`);
    assert.match(refused[0]!.message, new RegExp(`^termination removes no route \\(${code}\\)`));
  }
});
