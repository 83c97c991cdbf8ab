// flight's reference scenarios F1-F9 end to end against a real kube-apiserver (real Nodes, their
// conditions and events, ManagedClusters and their status) on both OpenStack targets: the emulator
// always, the real Keystone/Neutron/Nova with KUBEWARD_OPENSTACK_REAL=1. Time is the controller's
// injected clock, set relative to the servers' own `created`, so it runs the same on real Nova.
// Instance states Nova cannot be held in (building, deleting) are set in the emulator only.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '../../src/admin/metrics.ts';
import { ManualClock, systemClock, type Clock } from '../../src/base/clock.ts';
import { createSilentLogger } from '../../src/base/logger.ts';
import { EventRecorder } from '../../src/clients/kube/event-recorder.ts';
import { createKubeApi } from '../../src/clients/kube/kube-api.ts';
import { loadKubeConfig } from '../../src/clients/kube/load-kube-config.ts';
import { KINDS } from '../../src/clients/kube/resource-kinds.ts';
import type { OpenStackClient } from '../../src/clients/openstack/openstack-client.ts';
import { DEFAULT_FLIGHT_TIMING } from '../../src/controllers/flight/decide-flight.ts';
import { openStackFlightCloud } from '../../src/controllers/flight/flight-cloud.ts';
import { createFlightMetrics } from '../../src/controllers/flight/flight-metrics.ts';
import { flightReconciler } from '../../src/controllers/flight/flight-reconciler.ts';
import { FlightRunner, type FlightTarget } from '../../src/controllers/flight/flight-round.ts';
import { isCycleTrigger } from '../../src/controllers/operator/cycle-trigger.ts';
import { kubeClusterNodes, type ClusterNodes } from '../../src/controllers/managed-cluster/cluster-adapters.ts';
import type { ManagedCluster } from '../../src/controllers/managed-cluster/managed-cluster.ts';
import { FLIGHT_CONDITION } from '../../src/controllers/flight/flight-conditions.ts';
import { RouteWriter } from '../../src/controllers/managed-cluster/route-writer.ts';
import { kubernikusClaim } from '../../src/controllers/managed-cluster/provisioner-claims.ts';
import { startKubeFaultProxy } from '../../testkit/kube/kube-fault-proxy.ts';
import { kubeApiserverMissing } from '../../testkit/kube/kube-test-server.ts';
import { useKubeCluster } from '../../testkit/kube/kube-cluster.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { contractTargets } from '../openstack/contract-targets.ts';
import { useRoutedNetwork } from '../openstack/contract-fixture.ts';
import { kubeconfigParts, nodeCondition, nodeEvents, recordCalls, recordingEmitter, setNodes } from '../routegc/kube-cluster-fixture.ts';

const missing = kubeApiserverMissing();
const MIN = 60_000;
const CIDR = '100.100.0.0/16';
const NS = 'flight-scenarios';
const NO_NOVA = 'Nova is not in the catalog (setup.sh without OS_IT_NOVA=1)';

describe('flight scenarios F1-F9 against a real kube-apiserver', { skip: missing }, () => {
  const mgmt = useKubeCluster({ namespace: NS });

  for (const target of contractTargets(process.env)) {
    describe(`on ${target.name} OpenStack`, { skip: target.skip }, () => {
      const tenant = useRoutedNetwork(target);

      /** A server as Kubernikus creates it for the cluster its name says (kks-<cluster>-...): with its owner metadata. */
      const server = (name: string) => tenant.fx.addressedServer(name, tenant.net.networkId, kubernikusClaim(name.split('-')[1]!).metadata);
      /** Server names carry the fixture's prefix; each scenario has a cluster (and pool prefix) of its own. */
      const poolPrefix = (cluster: string) => `${tenant.fx.prefix}-kks-${cluster}-small-`;

      function flight(
        cluster: string,
        o: { clock?: Clock; os?: OpenStackClient; admin?: OpenStackClient; nodes?: ClusterNodes; extra?: Partial<FlightTarget> } = {},
      ) {
        const registry = new Registry();
        const log = createSilentLogger();
        const { emit, events } = recordingEmitter(mgmt.api, log);
        const rec = recordCalls(o.os ?? tenant.s.admin);
        const f = new FlightRunner(
          {
            cloud: openStackFlightCloud(rec.client, o.admin),
            nodes: o.nodes ?? kubeClusterNodes(mgmt.api),
            routes: new RouteWriter(rec.client.neutron),
            emit,
            metrics: createFlightMetrics(registry),
            log,
            clock: o.clock ?? systemClock,
          },
          {
            clusterName: cluster,
            ownerId: `uid-${cluster}`,
            clusterCidr: CIDR,
            securityGroupName: `${tenant.fx.prefix}-${cluster}-sg`,
            pools: [{ name: 'small', prefix: poolPrefix(cluster) }],
            provisionerClaims: [kubernikusClaim(cluster)],
            ...DEFAULT_FLIGHT_TIMING,
            rebootBeforeDelete: true,
            wantedRoles: [],
            forceSecurityGroupResync: false,
            repairMissingRoutes: false,
            routeLimit: tenant.s.maxRoutes,
            checkRoles: false,
            dryRun: false,
            ...o.extra,
          },
        );
        const calls = (method: string, id?: string) => rec.log.filter((c) => c.call === method && (id === undefined || c.args[0] === id)).length;
        const metric = async (name: string) => (await registry.getMetricsAsJSON()).find((m) => m.name === name)?.values ?? [];
        return { f, events, calls, metric, rec };
      }
      /** Real Nova refuses a reboot while the last one runs: wait until the server settled. */
      const settled = (id: string) =>
        waitFor(
          async () => {
            const x = await tenant.s.admin.nova.getServer(id);
            return x === undefined || (x.status === 'ACTIVE' && !x['OS-EXT-STS:task_state']);
          },
          { timeoutMs: 60_000, intervalMs: 100, what: `server ${id} settled` },
        );

      test("F1 (Kubernikus's rule, no reboots): only the unregistered VM past 45 min is deleted; the younger one once it crosses 45 min; the registered one never", async (t) => {
        if (!tenant.s.hasNova) return t.skip(NO_NOVA);
        const abcde = await server('kks-f1-small-abcde');
        // Nova's `created` has whole seconds: make the two ages differ by at least one.
        await waitFor(() => Date.now() >= abcde.createdMs + 1500, { timeoutMs: 5000, intervalMs: 50, what: 'a second boundary' });
        const fghjk = await server('kks-f1-small-fghjk');
        const mnpqr = await server('kks-f1-small-mnpqr');
        await setNodes(mgmt.api, [{ name: 'f1-mnpqr', ip: mnpqr.ip, instanceId: mnpqr.id }]);
        const clock = new ManualClock(abcde.createdMs + 45 * MIN);
        const { f, calls } = flight('f1', { clock, extra: { rebootBeforeDelete: false, softRebootAfterMs: 45 * MIN, hardRebootAfterMs: 0, deleteAfterMs: 0 } });
        await f.round();
        assert.deepEqual([calls('nova.deleteServer', abcde.id), calls('nova.deleteServer', fghjk.id), calls('nova.deleteServer', mnpqr.id)], [1, 0, 0]);
        clock.advance(fghjk.createdMs - abcde.createdMs - 1000);
        await f.round();
        assert.equal(calls('nova.deleteServer', fghjk.id), 0, 'a second short of 45 min it stays');
        clock.advance(1000);
        await f.round();
        assert.deepEqual([calls('nova.deleteServer', fghjk.id), calls('nova.deleteServer', mnpqr.id), calls('nova.reboot')], [1, 0, 0]);
      });

      test('F2: an errored VM is deleted in the next round; one already deleting is left alone', async (t) => {
        if (!tenant.s.hasNova) return t.skip(NO_NOVA);
        const bad = await server('kks-f2-small-badvm');
        // A Node of the cluster: an empty Node list would refuse every deletion (harm 1, docs/test-catalogue.md).
        await setNodes(mgmt.api, [{ name: 'f2-anchor', ip: '10.0.0.250' }]);
        // Real Nova: the admin reset-state action puts a server in vm_state error. The emulator has no
        // such action, nor can real Nova be held in task_state deleting: that half is emulator only.
        const going = tenant.s.emulator ? await server('kks-f2-small-going') : undefined;
        if (tenant.s.emulator) {
          const store = tenant.s.emulator.store.servers;
          store.get(bad.id)!.vm_state = 'error';
          Object.assign(store.get(going!.id)!, { vm_state: 'error', task_state: 'deleting' });
          t.after(() => void Object.assign(store.get(going!.id) ?? {}, { task_state: null }));
        } else {
          await tenant.fx.call('compute', { method: 'POST', path: `/servers/${bad.id}/action`, body: { 'os-resetState': { state: 'error' } } });
          await waitFor(async () => (await tenant.s.admin.nova.getServer(bad.id))?.['OS-EXT-STS:vm_state'] === 'error', {
            timeoutMs: 30_000,
            intervalMs: 100,
            what: 'vm_state error',
          });
        }
        const { f, calls, events } = flight('f2', { extra: { maxDeletionsPerRound: 5 } });
        await f.round();
        assert.equal(calls('nova.deleteServer', bad.id), 1);
        if (going) assert.equal(calls('nova.deleteServer', going.id), 0);
        assert.ok(events.some((e) => e.reason === 'FlightRepaired' && e.message === `delete errored instance ${tenant.fx.prefix}-kks-f2-small-badvm`));
      });

      test("F3: a running VM lacking the cluster's group gets it; a building one waits until it is active", async (t) => {
        if (!tenant.s.hasNova) return t.skip(NO_NOVA);
        const sg = await tenant.fx.securityGroup('f3-sg');
        const vm = await server('kks-f3-small-run');
        await setNodes(mgmt.api, [{ name: 'f3-run', ip: vm.ip, instanceId: vm.id }]);
        const building = tenant.s.emulator ? await server('kks-f3-small-build') : undefined;
        if (building) tenant.s.emulator!.store.servers.get(building.id)!.vm_state = 'building';
        const { f, calls } = flight('f3');
        await f.round();
        assert.equal(calls('nova.addSecurityGroup', vm.id), 1);
        assert.ok((await tenant.s.admin.nova.getServer(vm.id))!.security_groups!.some((g) => g.name === sg.name));
        if (!building) return;
        assert.equal(calls('nova.addSecurityGroup', building.id), 0, 'building: untouched');
        tenant.s.emulator!.store.servers.get(building.id)!.vm_state = 'active';
        await f.round();
        assert.equal(calls('nova.addSecurityGroup', building.id), 1, 'active now: assigned');
      });

      test('F4: only tcp from the pod CIDR → udp and icmp are created, then nothing; two groups of the name or no CIDR → no rule', async () => {
        // A cluster with neither Nodes nor instances yet: Nodes of another test's cluster would make its
        // empty instance list a doubtful view (InstanceListEmpty), which holds back rule changes.
        await setNodes(mgmt.api, []);
        const sg = await tenant.fx.securityGroup('f4-sg');
        await tenant.fx.call('network', {
          method: 'POST',
          path: '/security-group-rules',
          body: { security_group_rule: { security_group_id: sg.id, direction: 'ingress', ethertype: 'IPv4', protocol: 'tcp', remote_ip_prefix: CIDR } },
        });
        const one = flight('f4');
        await one.f.round();
        assert.equal(one.calls('neutron.createSecurityGroupRule'), 2);
        const protocols = (await tenant.s.admin.neutron.getSecurityGroup(sg.id))!.security_group_rules
          .filter((r) => r.remote_ip_prefix === CIDR)
          .map((r) => r.protocol)
          .sort();
        assert.deepEqual(protocols, ['icmp', 'tcp', 'udp']);
        await one.f.round();
        assert.equal(one.calls('neutron.createSecurityGroupRule'), 2, 'second round: no POST');

        await tenant.fx.securityGroup('f4b-sg');
        await tenant.fx.securityGroup('f4b-sg');
        const two = flight('f4b');
        const r = await two.f.round();
        assert.equal(two.calls('neutron.createSecurityGroupRule'), 0);
        assert.ok(r.plan.findings.some((x) => x.reason === 'SecurityGroupAmbiguous'));

        await tenant.fx.securityGroup('f4c-sg');
        const noCidr = flight('f4c', { extra: { clusterCidr: '' } });
        const r3 = await noCidr.f.round();
        assert.equal(noCidr.calls('neutron.createSecurityGroupRule'), 0);
        assert.ok(r3.plan.findings.length > 0, 'the empty CIDR is reported');
      });

      test("F5: while the cluster's API is down nothing is rebooted or deleted, however old; once it answers the timeline starts with a reboot", async (t) => {
        if (!tenant.s.hasNova) return t.skip(NO_NOVA);
        const old = await server('kks-f5-small-oldvm');
        const bad = tenant.s.emulator ? await server('kks-f5-small-badvm') : undefined;
        if (bad) tenant.s.emulator!.store.servers.get(bad.id)!.vm_state = 'error';
        const parts = kubeconfigParts(mgmt.kubeconfigText);
        const proxy = await startKubeFaultProxy({ server: parts.server, ca: parts.ca });
        t.after(() => proxy.close());
        proxy.mode = 'unavailable-503';
        const down = createKubeApi(loadKubeConfig({ kind: 'text', text: proxy.kubeconfig(parts.token), what: 'fault proxy' }), { timeoutMs: 3000 });
        // Two registered servers: a reboot and an errored deletion due among three would be "most at once".
        const anchors = [await server('kks-f5-small-anch1'), await server('kks-f5-small-anch2')];
        await setNodes(
          mgmt.api,
          anchors.map((a, i) => ({ name: `f5-anchor${i}`, ip: a.ip, instanceId: a.id })),
        );
        const clock = new ManualClock(old.createdMs + 120 * MIN);
        const { f, calls, events } = flight('f5', { clock, nodes: kubeClusterNodes(down), extra: { maxDeletionsPerRound: 5 } });
        for (let i = 0; i < 3; i++) {
          await f.round();
          clock.advance(5 * MIN);
        }
        assert.deepEqual([calls('nova.reboot'), calls('nova.deleteServer')], [0, 0]);
        assert.ok(proxy.faulted > 0);
        assert.ok(events.some((e) => e.reason === 'NodesUnreadable'));
        proxy.mode = 'pass';
        await f.round();
        assert.deepEqual([calls('nova.reboot', old.id), calls('nova.deleteServer', old.id)], [1, 0], 'the old one is rebooted first, not deleted');
        if (bad) assert.equal(calls('nova.deleteServer', bad.id), 1, 'the errored one goes once Nodes can be read');
      });

      test('F6: the service user holding only member gets the missing role assigned once through the admin credentials', async (t) => {
        const role = `${tenant.fx.prefix}-netadmin`;
        if (tenant.s.emulator) {
          tenant.s.emulator.store.roles.set(`role-${role}`, { id: `role-${role}`, name: role });
        } else {
          const created = await tenant.fx.call<{ role: { id: string } }>('identity', { method: 'POST', path: '/roles', body: { role: { name: role } } });
          t.after(() => tenant.s.admin.http.requestOrAbsent('identity', { method: 'DELETE', path: `/roles/${created.role.id}` }));
        }
        await setNodes(mgmt.api, []);
        const { f, calls } = flight('f6', { os: tenant.s.demo, admin: tenant.s.admin, extra: { checkRoles: true, wantedRoles: ['member', role] } });
        const first = await f.round();
        assert.deepEqual(first.done, [{ kind: 'assign-role', role }]);
        const second = await f.round();
        assert.deepEqual(second.plan.actions, []);
        assert.equal(calls('keystone.tokenInfo') > 0, true);
      });

      test('F7: a VM without tags gets four tag PUTs (the owner tag too) and one metadata POST; the second round sends none', async (t) => {
        if (!tenant.s.hasNova) return t.skip(NO_NOVA);
        const vm = await server('kks-f7-small-tags');
        await setNodes(mgmt.api, [{ name: 'f7-tags', ip: vm.ip, instanceId: vm.id }]);
        const { f, calls } = flight('f7');
        await f.round();
        assert.deepEqual([calls('nova.addTag', vm.id), calls('nova.mergeMetadata', vm.id)], [4, 1]);
        const got = (await tenant.s.admin.nova.getServer(vm.id))!;
        assert.deepEqual([...got.tags!].sort(), ['kubeward', 'kubeward:cluster=f7', 'kubeward:nodepool=small', 'kubeward:owner=uid-f7']);
        assert.equal(got.metadata['kubeward:owner'], 'uid-f7');
        assert.equal(got.metadata['kubeward:node'], 'f7-tags');
        await f.round();
        assert.deepEqual([calls('nova.addTag', vm.id), calls('nova.mergeMetadata', vm.id)], [4, 1]);
      });

      test('F8 and the condition: Upgrading, Terminating and noCloud clusters cost zero OpenStack calls; a Running one is repaired and gets FlightHealthy without a cycle of its own', async () => {
        const name = `f8-${target.name}`;
        await setNodes(mgmt.api, []);
        const sg = await tenant.fx.securityGroup(`${name}-sg`);
        const clusters = mgmt.api.resource<ManagedCluster>(KINDS.managedCluster);
        await clusters.create({
          metadata: { name, namespace: NS },
          spec: {
            kubeconfigSecretRef: { name: 'unused' },
            cloudCredentialsSecretRef: { name: 'unused', cloud: 'x' },
            clusterCIDR: CIDR,
            openstack: { securityGroupName: sg.name },
            nodePools: [{ name: 'small' }],
          },
        });
        const rec = recordCalls(tenant.s.admin);
        let asked = 0;
        const log = createSilentLogger();
        const fl = flightReconciler({
          clusters,
          clients: async () => (asked++, { kube: mgmt.api, openstack: rec.client }),
          events: new EventRecorder({ events: mgmt.api.events, component: 'kubeward-operator', clock: systemClock, log }),
          metrics: createFlightMetrics(new Registry()),
          clock: systemClock,
          log,
          intervalMs: 300_000,
          random: () => 0,
        });
        const key = `${NS}/${name}`;
        const signal = new AbortController().signal;
        for (const phase of ['Upgrading', 'Terminating'] as const) {
          await clusters.replaceStatus({ ...(await clusters.get(NS, name)), status: { phase } });
          assert.deepEqual(await fl(key, signal), { requeueAfterMs: 300_000 });
        }
        await clusters.patch(NS, name, { spec: { noCloud: true } });
        await clusters.replaceStatus({ ...(await clusters.get(NS, name)), status: { phase: 'Running' } });
        assert.deepEqual(await fl(key, signal), { requeueAfterMs: 300_000 });
        assert.deepEqual([rec.calls.length, asked], [0, 0], 'F8: no OpenStack call');

        await clusters.patch(NS, name, { spec: { noCloud: false } });
        const before = await clusters.get(NS, name);
        await fl(key, signal);
        assert.equal(rec.log.filter((c) => c.call === 'neutron.createSecurityGroupRule').length, 3);
        const after1 = await clusters.get(NS, name);
        const cond = (mc: ManagedCluster) => mc.status?.conditions?.find((c) => c.type === FLIGHT_CONDITION);
        assert.deepEqual(
          [cond(after1)?.status, cond(after1)?.reason, cond(after1)?.message],
          ['True', 'Repaired', 'repaired in the last round: create-rule ×3'],
        );
        assert.equal(after1.metadata.generation, before.metadata.generation);
        assert.equal(isCycleTrigger(after1, before), false, 'the status write does not start a cycle early');
        const onMc = (await mgmt.api.events.list(NS)).items.filter((e) => e.involvedObject.name === name).map((e) => e.reason);
        assert.ok(onMc.includes('FlightRepaired'), onMc.join(','));
        await fl(key, signal);
        assert.equal(cond(await clusters.get(NS, name))?.reason, 'NothingToRepair');
        await clusters.delete(NS, name);
      });

      test('F9: an unregistered VM is soft-rebooted at 10 min, hard-rebooted at 15 min and deleted at 30 min (injected clock), each an event and a metric', async (t) => {
        if (!tenant.s.hasNova) return t.skip(NO_NOVA);
        const vm = await server('kks-f9-small-aaaaa');
        await setNodes(mgmt.api, [{ name: 'f9-anchor', ip: '10.0.0.250' }]);
        const clock = new ManualClock(vm.createdMs);
        const { f, rec, events, metric } = flight('f9', { clock });
        const seen: string[] = [];
        for (let m = 0; m <= 31; m++) {
          const n = rec.log.length;
          await f.round();
          for (const c of rec.log.slice(n)) {
            if (c.args[0] !== vm.id) continue;
            if (c.call === 'nova.reboot') seen.push(`${m}m ${String(c.args[1])} reboot`);
            if (c.call === 'nova.deleteServer') seen.push(`${m}m delete`);
          }
          if (seen.at(-1)?.startsWith(`${m}m`) && seen.at(-1)!.includes('reboot')) await settled(vm.id);
          clock.advance(MIN);
        }
        assert.deepEqual(seen, ['10m SOFT reboot', '15m HARD reboot', '30m delete']);
        assert.deepEqual(
          events.filter((e) => e.reason === 'FlightRepaired' && /reboot|delete instance/.test(e.message)).map((e) => e.message.split(' ')[0]),
          ['soft-reboot', 'hard-reboot', 'delete'],
        );
        const done = (action: string) =>
          metric('kubeward_flight_repairs_total').then((v) =>
            v.filter((x) => x.labels.action === action && x.labels.result === 'done').reduce((a, x) => a + x.value, 0),
          );
        assert.deepEqual([await done('reboot'), await done('delete-instance')], [2, 1]);
      });

      test('RouteConflict on real Nodes: duplicate routes and a stale next hop are conditions with their reasons and Warning events on the Node', async (t) => {
        if (!tenant.s.hasNova) return t.skip(NO_NOVA);
        // a is the cluster's by Kubernikus's metadata, b by its Node: both are live instances of the cluster.
        const a = await server('kks-rc-small-aaaaa');
        const b = await server('kks-rc-small-bbbbb');
        await setNodes(mgmt.api, [{ name: 'rc-node-b', ip: b.ip, podCIDR: '100.100.4.0/24', instanceId: b.id }]);
        await tenant.s.admin.neutron.updateRoutes(tenant.routerId, [
          { destination: '100.100.4.0/24', nexthop: a.ip },
          { destination: '100.100.4.0/24', nexthop: b.ip },
        ]);
        const { f } = flight('rc', { extra: { routerId: tenant.routerId } });
        await f.round();
        const conflict = await nodeCondition(mgmt.api, 'rc-node-b', 'kubeward.io/RouteConflict');
        assert.deepEqual([conflict?.status, conflict?.reason], ['True', 'DuplicateRoutes']);
        assert.notEqual((await nodeCondition(mgmt.api, 'rc-node-b', 'kubeward.io/RouteMissing'))?.status, 'True');
        await tenant.s.admin.neutron.updateRoutes(tenant.routerId, [{ destination: '100.100.4.0/24', nexthop: '10.0.0.99' }]);
        await f.round();
        const stale = await nodeCondition(mgmt.api, 'rc-node-b', 'kubeward.io/RouteConflict');
        assert.deepEqual([stale?.status, stale?.reason], ['True', 'StaleNextHop']);
        assert.equal((await nodeCondition(mgmt.api, 'rc-node-b', 'kubeward.io/RouteMissing'))?.status, 'True');
        const reasons = (await nodeEvents(mgmt.api, 'rc-node-b')).filter((e) => e.type === 'Warning').map((e) => e.reason);
        for (const r of ['DuplicateRoutes', 'StaleNextHop', 'RouteMissing']) assert.ok(reasons.includes(r), `${r} in ${reasons.join(',')}`);
        await tenant.s.admin.neutron.updateRoutes(tenant.routerId, []);
      });
    });
  }
});
