// The scenarios that need no fault injection, run on both OpenStack targets of the contract suite:
// the emulator always, real Keystone/Neutron/Nova when KUBEWARD_OPENSTACK_REAL=1 (.ci/run sets it up).
// routegc R1 (both write methods), R5, R6 (a racing add through a second client), dry run and
// termination; flight F3, F4 and F7 in one round.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { systemClock } from '../../src/base/clock.ts';
import { createSilentLogger } from '../../src/base/logger.ts';
import type { NeutronApi } from '../../src/clients/openstack/openstack-client.ts';
import { openStackRouteGcCloud } from '../../src/controllers/routegc/routegc-cloud.ts';
import { RouteGcRunner } from '../../src/controllers/routegc/routegc-cycle.ts';
import { createRouteGcMetrics } from '../../src/controllers/routegc/routegc-metrics.ts';
import { RouteWriter, type RouteWriteMode } from '../../src/controllers/managed-cluster/route-writer.ts';
import { DEFAULT_FLIGHT_TIMING } from '../../src/controllers/flight/decide-flight.ts';
import { openStackFlightCloud } from '../../src/controllers/flight/flight-cloud.ts';
import { createFlightMetrics } from '../../src/controllers/flight/flight-metrics.ts';
import { FlightRunner } from '../../src/controllers/flight/flight-round.ts';
import { contractTargets } from '../openstack/contract-targets.ts';
import { useRoutedNetwork } from '../openstack/contract-fixture.ts';
import { FakeNodes } from './routegc-fixture.ts';

/** Counts writes and can race one route add in before the first full-list update. */
function watched(real: NeutronApi, race?: () => Promise<unknown>): { neutron: NeutronApi; writes: string[] } {
  const writes: string[] = [];
  let raced = false;
  const neutron = new Proxy(real, {
    get: (target, prop) => {
      const f = Reflect.get(target, prop) as (...a: unknown[]) => Promise<unknown>;
      if (!['updateRoutes', 'addExtraRoutes', 'removeExtraRoutes'].includes(String(prop))) return f.bind(target);
      return async (...args: unknown[]) => {
        writes.push(String(prop));
        if (prop === 'updateRoutes' && race && !raced) {
          raced = true;
          await race();
        }
        return f.apply(target, args);
      };
    },
  });
  return { neutron, writes };
}

for (const target of contractTargets(process.env)) {
  describe(`routegc and flight on ${target.name} OpenStack`, { skip: target.skip }, () => {
    const tenant = useRoutedNetwork(target);
    let a: { id: string; ip: string };
    let b: { id: string; ip: string };
    before(async () => {
      if (!tenant.s.hasNova) return;
      a = await tenant.fx.addressedServer('a', tenant.net.networkId);
      b = await tenant.fx.addressedServer('b', tenant.net.networkId);
    });

    async function scenario(mode: RouteWriteMode, race?: boolean, dryRun = false) {
      const nodes = new FakeNodes();
      nodes.nodes = [
        { name: 'na', addresses: [a.ip], podCidrs: ['100.100.1.0/24'], instanceId: a.id },
        { name: 'nb', addresses: [b.ip], podCidrs: ['100.100.4.0/24'], instanceId: b.id },
      ];
      await tenant.s.admin.neutron.updateRoutes(tenant.routerId, [
        { destination: '100.100.1.0/24', nexthop: a.ip },
        { destination: '100.100.2.0/24', nexthop: '10.0.0.99' },
        { destination: '100.100.4.0/24', nexthop: a.ip },
        { destination: '100.100.4.0/24', nexthop: b.ip },
        { destination: '10.200.0.0/16', nexthop: '10.0.0.99' },
      ]);
      const w = watched(
        tenant.s.admin.neutron,
        race ? () => tenant.s.admin.neutron.addExtraRoutes(tenant.routerId, [{ destination: '100.100.5.0/24', nexthop: '10.0.0.55' }]) : undefined,
      );
      const gc = new RouteGcRunner(
        {
          cloud: openStackRouteGcCloud(tenant.s.admin),
          writer: new RouteWriter(w.neutron, { mode }),
          nodes,
          emit: async () => {},
          metrics: createRouteGcMetrics(new Registry()),
          log: createSilentLogger(),
        },
        {
          cluster: 'k1',
          routerId: tenant.routerId,
          clusterCidr: '100.100.0.0/16',
          identity: { ownerId: 'name:k1', poolPrefixes: [] },
          routeLimit: tenant.s.maxRoutes,
          dryRun,
        },
      );
      const routes = async () => (await tenant.s.admin.neutron.getRouter(tenant.routerId))!.routes.map((r) => `${r.destination}>${r.nexthop}`).sort();
      return { gc, w, routes, routerId: tenant.routerId };
    }

    for (const mode of ['atomic', 'revision'] as const) {
      test(`R1 and R5 (${mode}): the orphan and the losing duplicate go after two cycles in one write`, async (t) => {
        if (!tenant.s.hasNova) return t.skip('Nova is not in the catalog (setup.sh without OS_IT_NOVA=1)');
        const { gc, w, routes } = await scenario(mode);
        await gc.cycle();
        assert.deepEqual(w.writes, []);
        await gc.cycle();
        assert.deepEqual(w.writes, [mode === 'atomic' ? 'removeExtraRoutes' : 'updateRoutes']);
        assert.deepEqual(await routes(), ['10.200.0.0/16>10.0.0.99', `100.100.1.0/24>${a.ip}`, `100.100.4.0/24>${b.ip}`].sort());
      });
    }

    test('R6: a route added by someone else between read and guarded write is kept (412, read again, retry)', async (t) => {
      if (!tenant.s.hasNova) return t.skip('Nova is not in the catalog');
      const { gc, routes } = await scenario('revision', true);
      await gc.cycle();
      const r = await gc.cycle();
      assert.equal(r.conflicts, 1);
      const now = await routes();
      assert.ok(now.includes('100.100.5.0/24>10.0.0.55'));
      assert.ok(!now.some((x) => x.startsWith('100.100.2.0/24')));
    });

    test('dry run writes nothing; termination removes every route of the cluster CIDR', async (t) => {
      if (!tenant.s.hasNova) return t.skip('Nova is not in the catalog');
      const dry = await scenario('auto', false, true);
      for (let i = 0; i < 3; i++) await dry.gc.cycle();
      assert.deepEqual(dry.w.writes, []);
      assert.equal((await dry.routes()).length, 5);
      const live = await scenario('auto');
      assert.deepEqual(await live.gc.removeAll(systemClock, { timeoutMs: 30_000, pollMs: 200 }), []);
      assert.deepEqual(await live.routes(), ['10.200.0.0/16>10.0.0.99']);
    });

    test('flight F3, F4, F7: group rules, the group on the instance, tags and metadata; a second round has nothing to do', async (t) => {
      if (!tenant.s.hasNova) return t.skip('Nova is not in the catalog');
      const sg = await tenant.fx.securityGroup('k1-sg');
      const nodes = new FakeNodes();
      nodes.nodes = [{ name: 'na', addresses: [a.ip], podCidrs: [], instanceId: a.id }];
      const f = new FlightRunner(
        {
          cloud: openStackFlightCloud(tenant.s.admin),
          nodes,
          routes: new RouteWriter(tenant.s.admin.neutron),
          emit: async () => {},
          metrics: createFlightMetrics(new Registry()),
          log: createSilentLogger(),
          clock: systemClock,
        },
        {
          clusterName: 'k1',
          clusterCidr: '100.100.0.0/16',
          securityGroupName: sg.name,
          pools: [],
          ...DEFAULT_FLIGHT_TIMING,
          rebootBeforeDelete: true,
          wantedRoles: [],
          forceSecurityGroupResync: false,
          repairMissingRoutes: false,
          routeLimit: tenant.s.maxRoutes,
          checkRoles: false,
          dryRun: false,
        },
      );
      const first = await f.round();
      assert.deepEqual(first.failed, []);
      assert.deepEqual(first.done.map((x) => x.kind).sort(), ['add-security-group', 'add-tags', 'create-rule', 'create-rule', 'create-rule', 'merge-metadata']);
      const server = (await tenant.s.admin.nova.getServer(a.id))!;
      assert.ok(server.security_groups!.some((g) => g.name === sg.name));
      assert.ok(server.tags!.includes('kubeward:cluster=k1'));
      assert.deepEqual((await f.round()).plan.actions, []);
    });
  });
}
