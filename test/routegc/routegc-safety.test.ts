// routegc's harms (docs/test-catalogue.md), each run where it can be: on both OpenStack targets (the emulator always,
// real Keystone/Neutron/Nova with KUBEWARD_OPENSTACK_REAL=1) when no fault is injected, on the
// emulator for a down Nova cell and a Neutron without revision-if-match.
// Harm 3: a partial Nova list; harm 4: an empty Node list without instance prefixes; harm 5: an
// over-broad cluster CIDR; harm 9: lost route updates; and the per-cycle removal budget.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '../../src/admin/metrics.ts';
import { systemClock } from '../../src/base/clock.ts';
import { createSilentLogger } from '../../src/base/logger.ts';
import type { NeutronApi, OpenStackClient } from '../../src/clients/openstack/openstack-client.ts';
import type { ExtraRoute } from '../../src/clients/openstack/openstack-types.ts';
import type { ClusterEvent } from '../../src/controllers/managed-cluster/cluster-events.ts';
import { RouteWriter, type RouteWriteMode } from '../../src/controllers/managed-cluster/route-writer.ts';
import { openStackRouteGcCloud } from '../../src/controllers/routegc/routegc-cloud.ts';
import { RouteGcRunner, type RouteGcTarget } from '../../src/controllers/routegc/routegc-cycle.ts';
import { createRouteGcMetrics } from '../../src/controllers/routegc/routegc-metrics.ts';
import { NEUTRON_EXTENSIONS } from '../../testkit/openstack/neutron-api.ts';
import { contractTargets } from '../openstack/contract-targets.ts';
import { useRoutedNetwork } from '../openstack/contract-fixture.ts';
import { FakeNodes, openCloud } from './routegc-fixture.ts';

const CIDR = '100.100.0.0/16';

/** A runner on a client, with its writes counted, its events and its metrics kept. */
function gc(
  os: OpenStackClient,
  routerId: string,
  nodes: FakeNodes,
  target: Partial<RouteGcTarget> = {},
  writer?: { mode?: RouteWriteMode; neutron?: NeutronApi },
) {
  const writes: string[] = [];
  const inner = writer?.neutron ?? os.neutron;
  const neutron = new Proxy(inner, {
    get: (t, prop) => {
      const f = Reflect.get(t, prop) as (...a: unknown[]) => unknown;
      if (typeof f !== 'function') return f;
      return (...args: unknown[]) => {
        if (['updateRoutes', 'addExtraRoutes', 'removeExtraRoutes'].includes(String(prop))) writes.push(String(prop));
        return f.apply(t, args);
      };
    },
  });
  const registry = new Registry();
  const events: ClusterEvent[] = [];
  const runner = new RouteGcRunner(
    {
      cloud: openStackRouteGcCloud(os),
      writer: new RouteWriter(neutron, { mode: writer?.mode ?? 'auto' }),
      nodes,
      emit: async (e) => void events.push(e),
      metrics: createRouteGcMetrics(registry),
      log: createSilentLogger(),
      clock: systemClock,
    },
    { cluster: 'k1', routerId, clusterCidr: CIDR, identity: { ownerId: 'uid-k1', poolPrefixes: [] }, routeLimit: 30, dryRun: false, ...target },
  );
  const metric = async (name: string, labels: Record<string, string> = {}) =>
    ((await registry.getMetricsAsJSON()).find((m) => m.name === name)?.values ?? [])
      .filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))
      .reduce((n, v) => n + v.value, 0);
  return { runner, writes, events, metric };
}

const text = (routes: ExtraRoute[]) => routes.map((r) => `${r.destination}>${r.nexthop}`).sort();

for (const target of contractTargets(process.env)) {
  describe(`routegc safety on ${target.name} OpenStack`, { skip: target.skip }, () => {
    const tenant = useRoutedNetwork(target);
    let live: { id: string; ip: string };
    before(async () => {
      if (!tenant.s.hasNova) return;
      live = await tenant.fx.addressedServer('live', tenant.net.networkId);
    });
    const routes = async () => text((await tenant.s.admin.neutron.getRouter(tenant.routerId))!.routes);

    test('harm 4: with an empty Node list and no instance prefix nothing is removed, however many cycles; the refusal is an event and a metric', async (t) => {
      if (!tenant.s.hasNova) return t.skip('Nova is not in the catalog');
      await tenant.s.admin.neutron.updateRoutes(tenant.routerId, [
        { destination: '100.100.1.0/24', nexthop: live.ip },
        { destination: '100.100.2.0/24', nexthop: '10.0.0.99' },
      ]);
      const g = gc(tenant.s.admin, tenant.routerId, new FakeNodes());
      for (let i = 0; i < 3; i++) assert.match((await g.runner.cycle()).skipped ?? '', /Node list is empty.*no instance prefix/);
      assert.deepEqual(g.writes, []);
      assert.deepEqual(await routes(), [`100.100.1.0/24>${live.ip}`, '100.100.2.0/24>10.0.0.99']);
      assert.ok(g.events.some((e) => e.reason === 'RouteGCRefused' && /NodeListEmpty/.test(e.message)));
      assert.equal(await g.metric('kubeward_routegc_refused_cycles_total', { reason: 'NodeListEmpty' }), 3);
    });

    test('harm 5: a /0 or too wide cluster CIDR removes nothing, not even at termination', async (t) => {
      if (!tenant.s.hasNova) return t.skip('Nova is not in the catalog');
      await tenant.s.admin.neutron.updateRoutes(tenant.routerId, [
        { destination: '100.100.2.0/24', nexthop: '10.0.0.99' },
        { destination: '10.200.0.0/16', nexthop: '10.0.0.99' },
      ]);
      const nodes = new FakeNodes();
      nodes.nodes = [{ name: 'n', addresses: [live.ip], podCidrs: [], instanceId: live.id }];
      for (const clusterCidr of ['0.0.0.0/0', '10.0.0.0/6']) {
        const g = gc(tenant.s.admin, tenant.routerId, nodes, { clusterCidr });
        for (let i = 0; i < 2; i++) assert.equal((await g.runner.cycle()).decision?.refusalCode, 'ClusterCIDRRefused', clusterCidr);
        await assert.rejects(g.runner.removeAll(systemClock, { timeoutMs: 0, pollMs: 0 }), /whole address space|wider than \/8/);
        assert.deepEqual(g.writes, [], clusterCidr);
      }
      assert.equal((await routes()).length, 2);
    });

    test('budget: at most --max-removals-per-cycle confirmed removals per cycle, the rest in later cycles, each counted', async (t) => {
      if (!tenant.s.hasNova) return t.skip('Nova is not in the catalog');
      const orphans = [1, 2, 3, 4, 5].map((i) => ({ destination: `100.100.${10 + i}.0/24`, nexthop: `10.0.0.${90 + i}` }));
      await tenant.s.admin.neutron.updateRoutes(tenant.routerId, [{ destination: '100.100.1.0/24', nexthop: live.ip }, ...orphans]);
      const nodes = new FakeNodes();
      nodes.nodes = [{ name: 'n', addresses: [live.ip], podCidrs: ['100.100.1.0/24'], instanceId: live.id }];
      const g = gc(tenant.s.admin, tenant.routerId, nodes, { maxRemovalsPerCycle: 3 });
      await g.runner.cycle();
      const second = await g.runner.cycle();
      assert.equal(second.removed.length, 3);
      assert.equal(second.decision!.heldBack.length, 2);
      assert.equal((await routes()).length, 3);
      assert.equal(await g.metric('kubeward_routegc_budget_held_back_total'), 2);
      assert.ok(g.events.some((e) => e.reason === 'RouteGCBudgetExhausted'));
      await g.runner.cycle();
      assert.deepEqual(await routes(), [`100.100.1.0/24>${live.ip}`]);
    });

    test('harm 9: the write method follows the extensions Neutron lists', async () => {
      const aliases = new Set((await tenant.s.admin.neutron.listExtensions()).map((e) => e.alias));
      const method = await new RouteWriter(tenant.s.admin.neutron).method();
      assert.equal(method, aliases.has('extraroute-atomic') ? 'atomic' : aliases.has('revision-if-match') ? 'revision' : 'plain');
    });
  });
}

describe('routegc safety with injected faults (emulator)', () => {
  test("harm 3: a server in a down Nova cell is listed as UNKNOWN (microversion 2.69) and the cycle refuses: its Node's route stays", async (t) => {
    const c = await openCloud(t);
    const down = await c.server('down');
    const up = await c.server('up');
    c.nodes.nodes = [
      { name: 'n-down', addresses: [down.ip], podCidrs: ['100.100.1.0/24'], instanceId: down.id },
      { name: 'n-up', addresses: [up.ip], podCidrs: ['100.100.2.0/24'], instanceId: up.id },
    ];
    await c.os.neutron.updateRoutes(c.routerId, [
      { destination: '100.100.1.0/24', nexthop: down.ip },
      { destination: '100.100.2.0/24', nexthop: up.ip },
      { destination: '100.100.3.0/24', nexthop: '10.0.0.99' },
    ]);
    c.emu.store.servers.get(down.id)!.cellDown = true;
    const listed = await c.os.nova.listServers();
    assert.equal(listed.find((x) => x.id === down.id)?.status, 'UNKNOWN', 'kubeward asks for 2.69, which lists down-cell servers');
    const g = gc(c.os, c.routerId, c.nodes);
    for (let i = 0; i < 3; i++) assert.equal((await g.runner.cycle()).decision?.refusalCode, 'InstanceListPartial');
    assert.deepEqual(g.writes, []);
    assert.equal((await c.routes()).length, 3);
    c.emu.store.servers.get(down.id)!.cellDown = false;
    await g.runner.cycle();
    await g.runner.cycle();
    assert.deepEqual(await c.routes(), [`100.100.1.0/24>${down.ip}`, `100.100.2.0/24>${up.ip}`], 'with the cell back only the real orphan goes');
  });

  test('harm 9: without revision-if-match no If-Match is sent; what a racing writer does after our plain write stands (no write-back of its routes)', async (t) => {
    const c = await openCloud(t, { neutronExtensions: NEUTRON_EXTENSIONS.filter((x) => x !== 'revision-if-match' && x !== 'extraroute-atomic') });
    const a = await c.server('a');
    c.nodes.nodes = [{ name: 'n-a', addresses: [a.ip], podCidrs: ['100.100.1.0/24'], instanceId: a.id }];
    const orphan = { destination: '100.100.9.0/24', nexthop: '10.0.0.99' };
    await c.os.neutron.updateRoutes(c.routerId, [{ destination: '100.100.1.0/24', nexthop: a.ip }, orphan]);
    // Another full-list writer read the router before A's route existed and writes right after us.
    let raced = false;
    const racing = new Proxy(c.os.neutron, {
      get: (target, prop) => {
        const f = Reflect.get(target, prop) as (...a: unknown[]) => Promise<unknown>;
        if (prop !== 'updateRoutes') return typeof f === 'function' ? f.bind(target) : f;
        return async (...args: unknown[]) => {
          const out = await f.apply(target, args);
          if (!raced) {
            raced = true;
            await target.updateRoutes(c.routerId, [orphan]);
          }
          return out;
        };
      },
    });
    const g = gc(c.os, c.routerId, c.nodes, {}, { neutron: racing });
    c.emu.requests = [];
    await g.runner.cycle();
    const r = await g.runner.cycle();
    assert.deepEqual(
      c.emu.requests.filter((x) => x.ifMatch !== undefined),
      [],
      'If-Match is never sent to a Neutron that would ignore it',
    );
    assert.equal(r.decision?.remove.length, 1);
    assert.deepEqual(g.writes, ['updateRoutes'], "one write: the other writer's later change is not overwritten by a repair");
    assert.deepEqual(await c.routes(), ['100.100.9.0/24>10.0.0.99'], "the other writer's list stands; its owner re-adds the live route");
  });
});
