// routegc's reference scenarios R1-R7 end to end against a real kube-apiserver (real Nodes, Node
// events, ManagedClusters and their status) and both OpenStack targets: the emulator always, the real
// Keystone/Neutron/Nova with KUBEWARD_OPENSTACK_REAL=1. R3 injects a Nova fault: emulator only.
// Also: the ManagedCluster conditions (RouteLimitApproaching, RouteGCHealthy) written without
// starting a cycle early.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { ManualClock, systemClock, type Clock } from '../../src/base/clock.ts';
import { createSilentLogger } from '../../src/base/logger.ts';
import { EventRecorder } from '../../src/clients/kube/event-recorder.ts';
import { KINDS } from '../../src/clients/kube/resource-kinds.ts';
import type { NeutronApi, OpenStackClient } from '../../src/clients/openstack/openstack-client.ts';
import { isCycleTrigger } from '../../src/controllers/operator/cycle-trigger.ts';
import { kubeClusterNodes } from '../../src/controllers/managed-cluster/cluster-adapters.ts';
import { openStackRouteGcCloud } from '../../src/controllers/routegc/routegc-cloud.ts';
import type { ManagedCluster } from '../../src/controllers/managed-cluster/managed-cluster.ts';
import { ROUTE_LIMIT_CONDITION, ROUTEGC_CONDITION } from '../../src/controllers/routegc/routegc-conditions.ts';
import { runPeriodically } from '../../src/controllers/managed-cluster/periodic-loop.ts';
import { RouteGcRunner } from '../../src/controllers/routegc/routegc-cycle.ts';
import { createRouteGcMetrics } from '../../src/controllers/routegc/routegc-metrics.ts';
import { routeGcReconciler } from '../../src/controllers/routegc/routegc-reconciler.ts';
import { RouteWriter, type RouteWriteMode } from '../../src/controllers/managed-cluster/route-writer.ts';
import { kubeApiserverMissing } from '../../testkit/kube/kube-test-server.ts';
import { useKubeCluster } from '../../testkit/kube/kube-cluster.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { contractTargets } from '../openstack/contract-targets.ts';
import { useRoutedNetwork } from '../openstack/contract-fixture.ts';
import { countingNodes, nodeEvents, recordCalls, recordingEmitter, setNodes } from './kube-cluster-fixture.ts';

const missing = kubeApiserverMissing();
const NS = 'routegc-scenarios';
const CIDR = '100.100.0.0/16';
const NO_NOVA = 'Nova is not in the catalog (setup.sh without OS_IT_NOVA=1)';

describe('routegc scenarios R1-R7 against a real kube-apiserver', { skip: missing }, () => {
  const mgmt = useKubeCluster({ namespace: NS });

  for (const target of contractTargets(process.env)) {
    describe(`on ${target.name} OpenStack`, { skip: target.skip }, () => {
      const tenant = useRoutedNetwork(target);
      let a: { id: string; ip: string };
      let b: { id: string; ip: string };
      before(async () => {
        if (!tenant.s.hasNova) return;
        a = await tenant.fx.addressedServer('a', tenant.net.networkId);
        b = await tenant.fx.addressedServer('b', tenant.net.networkId);
      });

      /** A runner on the real Nodes; node names carry the test's tag so that events of other tests do not count. */
      function runner(opts: { mode?: RouteWriteMode; neutron?: NeutronApi; os?: OpenStackClient } = {}) {
        const registry = new Registry();
        const log = createSilentLogger();
        const { emit, events } = recordingEmitter(mgmt.api, log);
        const nodes = countingNodes(kubeClusterNodes(mgmt.api));
        const gc = new RouteGcRunner(
          {
            cloud: openStackRouteGcCloud(opts.os ?? tenant.s.admin),
            writer: new RouteWriter(opts.neutron ?? tenant.s.admin.neutron, { mode: opts.mode ?? 'auto' }),
            nodes,
            emit,
            metrics: createRouteGcMetrics(registry),
            log,
          },
          {
            cluster: 'k1',
            routerId: tenant.routerId,
            clusterCidr: CIDR,
            identity: { ownerId: 'name:k1', poolPrefixes: [] },
            routeLimit: tenant.s.maxRoutes,
            dryRun: false,
          },
        );
        const metric = async (name: string) =>
          ((await registry.getMetricsAsJSON()).find((m) => m.name === name)?.values ?? []).reduce((n, v) => n + v.value, 0);
        return { gc, events, nodes, metric };
      }
      const routes = async () => (await tenant.s.admin.neutron.getRouter(tenant.routerId))!.routes.map((r) => `${r.destination}>${r.nexthop}`);

      test('R1: of five routes only the in-CIDR one with no instance behind it goes, after two cycles, in one write', async (t) => {
        if (!tenant.s.hasNova) return t.skip(NO_NOVA);
        await setNodes(mgmt.api, [
          { name: 'r1-a', ip: a.ip, podCIDR: '100.100.1.0/24', instanceId: a.id },
          { name: 'r1-b', ip: b.ip, podCIDR: '100.100.3.0/24', instanceId: b.id },
        ]);
        // The reference puts b's floating IP behind 100.100.3.0/24; real Neutron takes only next hops on
        // the router's subnets, so b's fixed address stands in for it.
        const initial = [
          { destination: '100.100.1.0/24', nexthop: a.ip },
          { destination: '100.100.2.0/24', nexthop: '10.0.0.99' },
          { destination: '100.100.3.0/24', nexthop: b.ip },
          { destination: '10.200.0.0/16', nexthop: '10.0.0.99' },
          { destination: '100.100.0.0/15', nexthop: '10.0.0.99' },
        ];
        await tenant.s.admin.neutron.updateRoutes(tenant.routerId, initial);
        const { client, calls } = recordCalls(tenant.s.admin);
        const { gc, events, metric } = runner({ os: client, neutron: client.neutron });
        await gc.cycle();
        assert.deepEqual(
          calls.filter((c) => c.includes('Routes')),
          [],
          'first sighting: no write',
        );
        await gc.cycle();
        assert.equal(calls.filter((c) => /removeExtraRoutes|updateRoutes/.test(c)).length, 1, 'one write');
        assert.deepEqual(
          (await routes()).sort(),
          initial
            .filter((r) => r.destination !== '100.100.2.0/24')
            .map((r) => `${r.destination}>${r.nexthop}`)
            .sort(),
        );
        assert.equal(await metric('kubeward_routegc_routes_removed_total'), 1);
        assert.ok(events.some((e) => e.reason === 'RemovedOrphanedRoute' && e.message.includes('100.100.2.0/24')));
      });

      test('R2: a router without routes costs one router GET: no Nova call, no Node list, no write', async () => {
        await tenant.s.admin.neutron.updateRoutes(tenant.routerId, []);
        const { client, calls } = recordCalls(tenant.s.admin);
        const { gc, nodes } = runner({ os: client, neutron: client.neutron });
        await gc.cycle();
        assert.deepEqual(calls, ['neutron.getRouter']);
        assert.equal(nodes.lists, 0);
      });

      test('R3: Nova answering 500 means no write and a counted failure; the next attempt comes 300-450 s later and finishes the job', async (t) => {
        if (!tenant.s.hasNova) return t.skip(NO_NOVA);
        if (!tenant.s.emulator) return t.skip('needs a Nova fault: emulator only');
        const emu = tenant.s.emulator;
        await setNodes(mgmt.api, [{ name: 'r3-a', ip: a.ip, podCIDR: '100.100.1.0/24', instanceId: a.id }]);
        await tenant.s.admin.neutron.updateRoutes(tenant.routerId, [
          { destination: '100.100.1.0/24', nexthop: a.ip },
          { destination: '100.100.2.0/24', nexthop: '10.0.0.99' },
        ]);
        const { gc, metric } = runner();
        const manual = new ManualClock(0);
        let sleeping = false;
        // The loop's clock, telling the test when the loop waits for its next cycle.
        const clock: Clock = { now: () => manual.now(), sleep: (ms, sig) => ((sleeping = true), manual.sleep(ms, sig).finally(() => void (sleeping = false))) };
        const ac = new AbortController();
        t.after(() => ac.abort());
        const attempts: { atMs: number; ok: boolean }[] = [];
        const loop = runPeriodically(
          async (signal) => {
            const atMs = clock.now();
            // Attempt 2 meets Nova failing; attempts 1 and 3 find it healthy.
            const fault = attempts.length === 1 ? emu.addFault({ service: 'compute', path: '^/servers/detail', status: 500 }) : undefined;
            try {
              await gc.cycle(signal);
              attempts.push({ atMs, ok: true });
            } catch (err) {
              attempts.push({ atMs, ok: false });
              throw err;
            } finally {
              if (fault) emu.faults.remove(fault.id);
            }
          },
          { name: 'routegc', intervalMs: 300_000, clock, log: createSilentLogger(), signal: ac.signal },
        );
        // Time moves in 10 s steps, only while the loop sleeps: at most 10 s late for each attempt.
        while (attempts.length < 3) {
          await waitFor(() => sleeping, { timeoutMs: 10_000, intervalMs: 2, what: 'the loop waiting for its next cycle' });
          manual.advance(10_000);
          await new Promise((r) => setImmediate(r));
        }
        ac.abort();
        await loop;
        assert.deepEqual(
          attempts.map((x) => x.ok),
          [true, false, true],
        );
        for (const [i, gap] of [
          [1, attempts[1]!.atMs - attempts[0]!.atMs],
          [2, attempts[2]!.atMs - attempts[1]!.atMs],
        ] as const) {
          assert.ok(gap >= 300_000 && gap <= 450_000 + 10_000, `attempt ${i + 1} came ${gap / 1000} s after the one before`);
        }
        assert.equal(await metric('kubeward_routegc_failed_cycles_total'), 1);
        assert.deepEqual(await routes(), [`100.100.1.0/24>${a.ip}`], 'removed once Nova answered again (the first sighting still counted)');
      });

      test('R4 and the conditions: Upgrading and noCloud clusters cost zero OpenStack calls; a Running one gets RouteLimitApproaching and RouteGCHealthy without a cycle of its own', async (t) => {
        if (!tenant.s.hasNova) return t.skip(NO_NOVA);
        await setNodes(mgmt.api, [{ name: 'r4-a', ip: a.ip, podCIDR: '100.100.1.0/24', instanceId: a.id }]);
        await tenant.s.admin.neutron.updateRoutes(tenant.routerId, [
          { destination: '100.100.1.0/24', nexthop: a.ip },
          { destination: '100.100.2.0/24', nexthop: '10.0.0.99' },
          { destination: '10.200.0.0/16', nexthop: '10.0.0.99' },
        ]);
        const clusters = mgmt.api.resource<ManagedCluster>(KINDS.managedCluster);
        const name = `r4-${target.name}`;
        await clusters.create({
          metadata: { name, namespace: NS },
          spec: {
            kubeconfigSecretRef: { name: 'unused' },
            cloudCredentialsSecretRef: { name: 'unused', cloud: 'x' },
            clusterCIDR: CIDR,
            openstack: { routerID: tenant.routerId },
          },
        });
        const { client, calls } = recordCalls(tenant.s.admin);
        let asked = 0;
        const log = createSilentLogger();
        const registry = new Registry();
        const gc = routeGcReconciler({
          clusters,
          clients: async () => (asked++, { kube: mgmt.api, openstack: client }),
          events: new EventRecorder({ events: mgmt.api.events, component: 'kubeward-operator', clock: systemClock, log }),
          metrics: createRouteGcMetrics(registry),
          clock: systemClock,
          log,
          intervalMs: 300_000,
          random: () => 0,
          routeLimit: 6,
          routeLimitHeadroom: 3,
        });
        const key = `${NS}/${name}`;
        const signal = new AbortController().signal;
        for (const status of [{ phase: 'Upgrading' as const }, { phase: 'Terminating' as const }]) {
          await clusters.replaceStatus({ ...(await clusters.get(NS, name)), status });
          assert.deepEqual(await gc(key, signal), { requeueAfterMs: 300_000 });
        }
        await clusters.patch(NS, name, { spec: { noCloud: true } });
        await clusters.replaceStatus({ ...(await clusters.get(NS, name)), status: { phase: 'Running' } });
        assert.deepEqual(await gc(key, signal), { requeueAfterMs: 300_000 });
        assert.deepEqual([calls.length, asked], [0, 0], 'R4: not one OpenStack call, not even the clients were built');

        await clusters.patch(NS, name, { spec: { noCloud: false } });
        const before = await clusters.get(NS, name);
        await gc(key, signal);
        assert.ok(calls.length > 0);
        const after1 = await clusters.get(NS, name);
        const cond = (mc: ManagedCluster, type: string) => mc.status?.conditions?.find((c) => c.type === type);
        assert.deepEqual([cond(after1, ROUTE_LIMIT_CONDITION)?.status, cond(after1, ROUTE_LIMIT_CONDITION)?.reason], ['True', 'RouteLimitApproaching']);
        assert.match(cond(after1, ROUTE_LIMIT_CONDITION)!.message, /3 of at most 6 routes/);
        assert.deepEqual([cond(after1, ROUTEGC_CONDITION)?.status, cond(after1, ROUTEGC_CONDITION)?.reason], ['True', 'RemovalPending']);
        assert.equal(after1.status?.phase, 'Running', 'the phase written by someone else stays');
        assert.equal(after1.metadata.generation, before.metadata.generation, 'a status write leaves the generation alone');
        assert.equal(isCycleTrigger(after1, before), false, 'so the operator does not start a cycle early for it');
        const mcEvents = (await mgmt.api.events.list(NS)).items.filter((e) => e.involvedObject.name === name).map((e) => e.reason);
        assert.ok(mcEvents.includes('RouteLimitApproaching'), mcEvents.join(','));
        const limitMetric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'kubeward_routegc_route_limit_approaching')!;
        assert.equal(limitMetric.values[0]!.value, 1);

        await gc(key, signal);
        assert.equal(cond(await clusters.get(NS, name), ROUTEGC_CONDITION)?.reason, 'RoutesClean', 'the orphan went on the second cycle');
        await gc(key, signal);
        const after2 = await clusters.get(NS, name);
        assert.equal(cond(after2, ROUTE_LIMIT_CONDITION)?.status, 'False', 'the next look counts 2 of 6 routes: below the headroom again');
        await gc(key, signal);
        assert.equal((await clusters.get(NS, name)).metadata.resourceVersion, after2.metadata.resourceVersion, 'nothing changed: no status write');
        await clusters.delete(NS, name);
      });

      test('R5: of a duplicate pair the route to the Node owning the pod CIDR stays, the other goes on the second cycle', async (t) => {
        if (!tenant.s.hasNova) return t.skip(NO_NOVA);
        await setNodes(mgmt.api, [
          { name: 'r5-a', ip: a.ip, podCIDR: '100.100.1.0/24', instanceId: a.id },
          { name: 'r5-b', ip: b.ip, podCIDR: '100.100.4.0/24', instanceId: b.id },
        ]);
        await tenant.s.admin.neutron.updateRoutes(tenant.routerId, [
          { destination: '100.100.4.0/24', nexthop: a.ip },
          { destination: '100.100.4.0/24', nexthop: b.ip },
        ]);
        const { gc, events } = runner();
        await gc.cycle();
        assert.equal((await routes()).length, 2);
        await gc.cycle();
        assert.deepEqual(await routes(), [`100.100.4.0/24>${b.ip}`]);
        assert.ok(events.some((e) => e.reason === 'RemovedDuplicateRoute' && e.message.includes(a.ip)));
      });

      test('R6: a route the cloud controller adds between our read and our guarded write is kept (412, read again, retry)', async (t) => {
        if (!tenant.s.hasNova) return t.skip(NO_NOVA);
        await setNodes(mgmt.api, [{ name: 'r6-a', ip: a.ip, podCIDR: '100.100.1.0/24', instanceId: a.id }]);
        await tenant.s.admin.neutron.updateRoutes(tenant.routerId, [
          { destination: '100.100.1.0/24', nexthop: a.ip },
          { destination: '100.100.2.0/24', nexthop: '10.0.0.99' },
        ]);
        let raced = false;
        // Another client (the cloud controller) adds a route just before our first full-list PUT.
        const racing = new Proxy(tenant.s.admin.neutron, {
          get: (t, prop) => {
            const f = (Reflect.get(t, prop) as (...x: unknown[]) => Promise<unknown>).bind(t);
            if (prop !== 'updateRoutes') return f;
            return async (...args: unknown[]) => {
              if (!raced) {
                raced = true;
                await tenant.s.admin.neutron.addExtraRoutes(tenant.routerId, [{ destination: '100.100.5.0/24', nexthop: '10.0.0.55' }]);
              }
              return f(...args);
            };
          },
        });
        const { gc, metric } = runner({ mode: 'revision', neutron: racing });
        await gc.cycle();
        const r = await gc.cycle();
        assert.equal(r.conflicts, 1);
        assert.deepEqual((await routes()).sort(), [`100.100.1.0/24>${a.ip}`, '100.100.5.0/24>10.0.0.55']);
        assert.equal(await metric('kubeward_routegc_conflicts_total'), 1);
      });

      test('R7: Nodes exist but none of their instances does: routegc refuses every cycle, says so, removes nothing', async () => {
        // providerIDs of servers that do not exist: the cluster's instance list is empty.
        await setNodes(mgmt.api, [
          { name: 'r7-a', ip: '10.0.0.11', podCIDR: '100.100.1.0/24', instanceId: '00000000-0000-4000-8000-000000000001' },
          { name: 'r7-b', ip: '10.0.0.12', podCIDR: '100.100.2.0/24', instanceId: '00000000-0000-4000-8000-000000000002' },
        ]);
        await tenant.s.admin.neutron.updateRoutes(tenant.routerId, [
          { destination: '100.100.1.0/24', nexthop: '10.0.0.11' },
          { destination: '100.100.2.0/24', nexthop: '10.0.0.12' },
        ]);
        const { client, calls } = recordCalls(tenant.s.admin);
        const { gc, events, metric } = runner({ os: client, neutron: client.neutron });
        for (let i = 0; i < 3; i++) assert.match((await gc.cycle()).skipped ?? '', /instance list is empty while 2 Node\(s\) exist/);
        assert.equal((await routes()).length, 2);
        assert.equal(calls.filter((c) => /Routes$/.test(c)).length, 0);
        assert.equal(await metric('kubeward_routegc_refused_cycles_total'), 3);
        assert.ok(events.some((e) => e.reason === 'RouteGCRefused'));
        assert.deepEqual(await nodeEvents(mgmt.api, 'r7-a'), [], 'a refusal concerns the cluster, not a Node');
      });
    });
  }
});
