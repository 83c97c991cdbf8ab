// flight's harms (docs/test-catalogue.md) on both OpenStack targets (the emulator always, real Keystone/Neutron/Nova
// with KUBEWARD_OPENSTACK_REAL=1): an empty Node list (harm 1), identity by name, duplicate names and
// colliding prefixes (harm 2), rules from an over-broad CIDR (harm 5), per-round budgets; and, on the
// emulator only, a Nova cell that is down. Every check counts the destructive calls actually sent.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '../../src/admin/metrics.ts';
import { systemClock } from '../../src/base/clock.ts';
import { createSilentLogger } from '../../src/base/logger.ts';
import type { ClusterEvent } from '../../src/controllers/managed-cluster/cluster-events.ts';
import { RouteWriter } from '../../src/controllers/managed-cluster/route-writer.ts';
import { kubernikusClaim } from '../../src/controllers/managed-cluster/provisioner-claims.ts';
import { DEFAULT_FLIGHT_TIMING } from '../../src/controllers/flight/decide-flight.ts';
import { openStackFlightCloud } from '../../src/controllers/flight/flight-cloud.ts';
import { createFlightMetrics } from '../../src/controllers/flight/flight-metrics.ts';
import { FlightRunner, type FlightTarget } from '../../src/controllers/flight/flight-round.ts';
import { contractTargets, type TargetSession } from '../openstack/contract-targets.ts';
import { ContractFixture, type TestNet } from '../openstack/contract-fixture.ts';
import { recordCalls } from '../routegc/kube-cluster-fixture.ts';
import { FakeNodes, openCloud } from '../routegc/routegc-fixture.ts';
import type { OpenStackClientHandle } from '../../src/clients/openstack/create-openstack-client.ts';

const DESTRUCTIVE = [
  'nova.reboot',
  'nova.deleteServer',
  'nova.addTag',
  'nova.mergeMetadata',
  'nova.addSecurityGroup',
  'neutron.createSecurityGroupRule',
  'neutron.deleteSecurityGroupRule',
];

function flight(os: OpenStackClientHandle, nodes: FakeNodes, prefix: string, extra: Partial<FlightTarget> = {}) {
  const rec = recordCalls(os);
  const registry = new Registry();
  const events: ClusterEvent[] = [];
  const runner = new FlightRunner(
    {
      cloud: openStackFlightCloud(rec.client),
      nodes,
      routes: new RouteWriter(rec.client.neutron),
      emit: async (e) => void events.push(e),
      metrics: createFlightMetrics(registry),
      log: createSilentLogger(),
      clock: systemClock,
    },
    {
      clusterName: 'k1',
      ownerId: 'uid-k1',
      clusterCidr: '100.100.0.0/16',
      securityGroupName: `${prefix}-k1-sg`,
      pools: [{ name: 'small', prefix: `${prefix}-kks-k1-small-` }],
      provisionerClaims: [kubernikusClaim('k1')],
      ...DEFAULT_FLIGHT_TIMING,
      softRebootAfterMs: 0,
      rebootBeforeDelete: true,
      wantedRoles: [],
      forceSecurityGroupResync: false,
      repairMissingRoutes: false,
      routeLimit: 30,
      checkRoles: false,
      dryRun: false,
      ...extra,
    },
  );
  /** The destructive calls sent, as "call id" (the instance or group they targeted). */
  const destructive = () =>
    rec.log
      .filter((l) => DESTRUCTIVE.includes(l.call))
      .map((l) => `${l.call} ${typeof l.args[0] === 'string' ? l.args[0] : (l.args[0] as { security_group_id?: string }).security_group_id}`);
  const metric = async (name: string) => ((await registry.getMetricsAsJSON()).find((m) => m.name === name)?.values ?? []).reduce((n, v) => n + v.value, 0);
  return { runner, destructive, events, metric, rec };
}

for (const target of contractTargets(process.env)) {
  describe(`flight safety on ${target.name} OpenStack`, { skip: target.skip }, () => {
    let s: TargetSession;
    let fx: ContractFixture;
    let net: TestNet;
    const servers = new Map<string, { id: string; ip: string }>();
    before(async () => {
      s = await target.open();
      fx = new ContractFixture(s.admin);
      net = await fx.network('10.0.0.0/24');
      await fx.securityGroup('k1-sg');
      if (!s.hasNova) return;
      // Ours by Kubernikus's metadata, a foreign one named like a Node, two sharing one name, and a
      // server of cluster k1-small (pool x) whose name starts with k1's pool prefix.
      const k1 = kubernikusClaim('k1').metadata;
      for (const [name, metadata] of [
        ['kks-k1-small-anchr', k1],
        ['kks-k1-small-unre1', k1],
        ['kks-k1-small-unre2', k1],
        ['worker-x', undefined],
        ['kks-k1-small-dupes', k1],
        ['kks-k1-small-dupes', k1],
        ['kks-k1-small-x-abcde', kubernikusClaim('k1-small').metadata],
      ] as const) {
        const id = await fx.server(name, net.networkId, metadata);
        const key = servers.has(name) ? `${name}#2` : name;
        servers.set(key, { id, ip: Object.values((await s.admin.nova.getServer(id))!.addresses).flat()[0]!.addr });
      }
    });
    after(async () => {
      await fx?.cleanup();
      await s?.close();
    });
    const id = (name: string) => servers.get(name)!.id;

    test('harm 1: an empty Node list reboots, deletes, labels and opens nothing; with Nodes back the unregistered one is repaired', async (t) => {
      if (!s.hasNova) return t.skip('Nova is not in the catalog');
      const nodes = new FakeNodes();
      const f = flight(s.admin, nodes, fx.prefix);
      const round = await f.runner.round();
      assert.deepEqual(f.destructive(), []);
      assert.equal(round.plan.refusal?.code, 'NodeListEmpty');
      assert.ok(f.events.some((e) => e.reason === 'NodeListEmpty'));
      assert.equal(await f.metric('kubeward_flight_refused_rounds_total'), 1);
      const node = (name: string) => ({ name: `n-${name}`, addresses: [servers.get(name)!.ip], podCidrs: [], instanceId: id(name) });
      nodes.nodes = [node('kks-k1-small-anchr')];
      const next = await f.runner.round();
      assert.equal(next.plan.refusal?.code, 'NodeListShrunk', 'two of three instances without a Node at once is still a doubtful Node list');
      assert.deepEqual(f.destructive(), []);
      // Control: with a Node list that covers the cluster, the one unregistered server is repaired.
      nodes.nodes = [node('kks-k1-small-anchr'), node('kks-k1-small-unre1')];
      const third = await f.runner.round();
      assert.equal(third.plan.refusal, undefined);
      assert.ok(f.destructive().includes(`nova.reboot ${id('kks-k1-small-unre2')}`));
    });

    test("harm 2: only proven servers are touched: not a foreign one named like a Node, not two sharing a name, not another cluster's behind a colliding prefix", async (t) => {
      if (!s.hasNova) return t.skip('Nova is not in the catalog');
      const nodes = new FakeNodes();
      const node = (name: string, byId: boolean) => ({
        name: byId ? `n-${name}` : `${fx.prefix}-${name}`,
        addresses: [servers.get(name)!.ip],
        podCidrs: [],
        instanceId: byId ? id(name) : undefined,
      });
      // Nodes for every proven server but unre2; the foreign "worker-x" has a Node of its name only.
      nodes.nodes = [node('kks-k1-small-anchr', true), node('kks-k1-small-unre1', true), node('worker-x', false), node('kks-k1-small-dupes', false)];
      const f = flight(s.admin, nodes, fx.prefix, { maxMetadataWritesPerRound: 100, maxRuleChangesPerRound: 100 });
      const round = await f.runner.round();
      assert.equal(round.plan.refusal, undefined);
      const touched = new Set(f.destructive().map((x) => x.split(' ')[1]));
      for (const name of ['worker-x', 'kks-k1-small-dupes', 'kks-k1-small-dupes#2', 'kks-k1-small-x-abcde'])
        assert.ok(!touched.has(id(name)), `${name} must not be touched`);
      assert.ok(f.destructive().includes(`nova.reboot ${id('kks-k1-small-unre2')}`), 'the unregistered proven server starts its timeline');
      assert.ok(round.plan.findings.some((x) => x.reason === 'DuplicateInstanceName'));
      const foreign = (await s.admin.nova.getServer(id('worker-x')))!;
      assert.equal(foreign.metadata['kubeward:owner'], undefined, 'no ownership stamped on a server proven by nothing');
      for (const name of ['kks-k1-small-anchr', 'kks-k1-small-unre1', 'kks-k1-small-unre2']) {
        assert.equal((await s.admin.nova.getServer(id(name)))!.metadata['kubeward:owner'], 'uid-k1', `${name}: ownership, once proven, is written down`);
      }
    });

    test("harm 5: no rule is created from 0.0.0.0/0, even forced, nor from a CIDR that does not hold the Nodes' pod CIDRs", async (t) => {
      if (!s.hasNova) return t.skip('Nova is not in the catalog');
      const nodes = new FakeNodes();
      nodes.nodes = [{ name: 'n-anchor', addresses: [], podCidrs: ['10.9.0.0/24'], instanceId: id('kks-k1-small-anchr') }];
      for (const extra of [{ clusterCidr: '0.0.0.0/0', allowWide: true }, { clusterCidr: '100.100.0.0/16' }]) {
        const f = flight(s.admin, nodes, fx.prefix, { pools: [], ...extra });
        await f.runner.round();
        assert.deepEqual(
          f.rec.calls.filter((c) => c === 'neutron.createSecurityGroupRule'),
          [],
          extra.clusterCidr,
        );
      }
    });
  });
}

test('a Nova cell that is down: an errored instance is not deleted while the list may be partial (emulator)', async (t) => {
  const c = await openCloud(t);
  await c.fx.securityGroup('k1-sg');
  const k1 = kubernikusClaim('k1').metadata;
  const a = await c.server('kks-k1-small-aaaaa', k1);
  const bad = await c.server('kks-k1-small-badvm', k1);
  const down = await c.server('kks-k1-small-downn', k1);
  c.nodes.nodes = [
    { name: 'n-a', addresses: [a.ip], podCidrs: [], instanceId: a.id },
    { name: 'n-down', addresses: [down.ip], podCidrs: [], instanceId: down.id },
  ];
  c.emu.store.servers.get(bad.id)!.vm_state = 'error';
  c.emu.store.servers.get(down.id)!.cellDown = true;
  const f = flight(c.os, c.nodes, c.fx.prefix);
  const round = await f.runner.round();
  assert.equal(round.plan.refusal?.code, 'InstanceListPartial');
  assert.deepEqual(f.destructive(), []);
  c.emu.store.servers.get(down.id)!.cellDown = false;
  await f.runner.round();
  assert.ok(f.destructive().includes(`nova.deleteServer ${bad.id}`), 'with the cell back the errored instance goes');
});
