// flight against the OpenStack emulator through the real client, on an injected clock: the reboot →
// reboot → delete timeline, the six repairs (F2-F4, F6, F7), no deletions without Nodes (F5),
// missing-route repair, and Neutron or Nova failing mid-round.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/base/clock.ts';
import { createSilentLogger } from '../../src/base/logger.ts';
import { resolveCloudConfig } from '../../src/clients/openstack/cloud-config.ts';
import { createOpenStackClient } from '../../src/clients/openstack/create-openstack-client.ts';
import { RouteWriter } from '../../src/controllers/managed-cluster/route-writer.ts';
import { kubernikusClaim } from '../../src/controllers/managed-cluster/provisioner-claims.ts';
import { DEFAULT_FLIGHT_TIMING } from '../../src/controllers/flight/decide-flight.ts';
import { openStackFlightCloud, type FlightCloud } from '../../src/controllers/flight/flight-cloud.ts';
import { createFlightMetrics } from '../../src/controllers/flight/flight-metrics.ts';
import { FlightRunner, type FlightTarget } from '../../src/controllers/flight/flight-round.ts';
import { openCloud, type Cloud } from '../routegc/routegc-fixture.ts';

const MIN = 60_000;
/** What Kubernikus writes on the servers it creates for cluster k1: the proof of ownership flight needs. */
const K1 = kubernikusClaim('k1').metadata;
const T0 = Date.parse('2026-06-01T12:00:00Z');

function target(c: Cloud, extra: Partial<FlightTarget> = {}): FlightTarget {
  return {
    clusterName: 'k1',
    ownerId: 'uid-k1',
    clusterCidr: '100.100.0.0/16',
    securityGroupName: 'k1-sg',
    pools: [{ name: 'small', prefix: 'kks-k1-small-' }],
    ...DEFAULT_FLIGHT_TIMING,
    rebootBeforeDelete: true,
    wantedRoles: [],
    forceSecurityGroupResync: false,
    repairMissingRoutes: false,
    routeLimit: 30,
    routerId: c.routerId,
    provisionerClaims: [kubernikusClaim('k1')],
    checkRoles: false,
    dryRun: false,
    ...extra,
  };
}

const metricsOf = new WeakMap<Cloud, ReturnType<typeof createFlightMetrics>>();

function runner(c: Cloud, clock: ManualClock, extra: Partial<FlightTarget> = {}, cloud?: FlightCloud): FlightRunner {
  if (!metricsOf.has(c)) metricsOf.set(c, createFlightMetrics(c.registry));
  return new FlightRunner(
    {
      cloud: cloud ?? openStackFlightCloud(c.os),
      nodes: c.nodes,
      routes: new RouteWriter(c.os.neutron),
      emit: async (e) => void c.events.push(e),
      metrics: metricsOf.get(c)!,
      log: createSilentLogger(),
      clock,
    },
    target(c, extra),
  );
}

async function setup(t: Parameters<typeof openCloud>[0]) {
  const clock = new ManualClock(T0);
  const c = await openCloud(t, { clock, timings: { serverBuildMs: 0, serverRebootMs: 0, serverDeleteMs: 0 } });
  const sg = await c.fx.call<{ security_group: { id: string } }>('network', {
    method: 'POST',
    path: '/security-groups',
    body: { security_group: { name: 'k1-sg' } },
  });
  return { c, clock, sgId: sg.security_group.id };
}

/**
 * A registered instance and its Node: a real cluster has some, and an empty Node list is the harm-1
 * case that refuses every destructive repair (test/flight/flight-safety.test.ts).
 */
async function anchor(c: Cloud, name = 'anchr'): Promise<void> {
  const a = await c.server(`kks-k1-small-${name}`, K1);
  c.nodes.nodes.push({ name: `n-${name}`, addresses: [a.ip], podCidrs: [], instanceId: a.id });
}

const actions = (c: Cloud, id: string) => c.emu.requests.filter((r) => r.method === 'POST' && r.path.endsWith(`/servers/${id}/action`)).length;
const deletes = (c: Cloud, id: string) => c.count('DELETE', `/servers/${id}`);

test('F9 on an injected clock: soft reboot at 10 min, hard reboot at 15 min, deletion at 30 min, each an event and a metric', async (t) => {
  const { c, clock } = await setup(t);
  const vm = await c.server('kks-k1-small-aaaaa', K1); // the fixture prefixes names: match on its prefix
  await c.os.nova.addSecurityGroup(vm.id, 'k1-sg'); // so that the only server actions are reboots
  await anchor(c);
  const f = runner(c, clock, { pools: [{ name: 'small', prefix: `${c.fx.prefix}-kks-k1-small-` }] });
  const seen: string[] = [];
  for (let m = 0; m <= 31; m++) {
    const before = c.emu.requests.length;
    await f.round();
    for (const r of c.emu.requests.slice(before)) {
      if (r.path.endsWith(`/servers/${vm.id}/action`)) seen.push(`${m}m reboot`);
      if (r.method === 'DELETE' && r.path.endsWith(`/servers/${vm.id}`)) seen.push(`${m}m delete`);
    }
    clock.advance(MIN);
  }
  assert.deepEqual(seen, ['10m reboot', '15m reboot', '30m delete']);
  assert.deepEqual(
    c.events.filter((e) => e.reason === 'FlightRepaired' && /reboot|delete instance/.test(e.message)).map((e) => e.message.split(',')[0]),
    [
      `soft-reboot instance ${c.fx.prefix}-kks-k1-small-aaaaa`,
      `hard-reboot instance ${c.fx.prefix}-kks-k1-small-aaaaa`,
      `delete instance ${c.fx.prefix}-kks-k1-small-aaaaa`,
    ],
  );
  const m = (await c.registry.getMetricsAsJSON()).find((x) => x.name === 'kubeward_flight_repairs_total')!;
  const n = (action: string) => m.values.filter((v) => v.labels.action === action && v.labels.result === 'done').reduce((s, v) => s + v.value, 0);
  assert.deepEqual([n('reboot'), n('delete-instance')], [2, 1]);
});

test('F5: with the cluster API down nothing is rebooted or deleted, even errored or old instances; it resumes when Nodes read again', async (t) => {
  const { c, clock } = await setup(t);
  const old = await c.server('kks-k1-small-oldvm', K1);
  const bad = await c.server('kks-k1-small-badvm', K1);
  // Two registered ones: a reboot and a deletion due in a cluster of three would be "most at once".
  await anchor(c);
  await anchor(c, 'nchr2');
  await c.os.nova.addSecurityGroup(old.id, 'k1-sg');
  c.emu.requests = [];
  c.emu.store.servers.get(bad.id)!.vm_state = 'error';
  clock.advance(120 * MIN);
  c.nodes.failing = true;
  const f = runner(c, clock, { pools: [{ name: 'small', prefix: `${c.fx.prefix}-kks-k1-small-` }], maxDeletionsPerRound: 5 });
  for (let i = 0; i < 3; i++) await f.round();
  assert.deepEqual([actions(c, old.id), deletes(c, old.id), deletes(c, bad.id)], [0, 0, 0]);
  assert.ok(c.events.some((e) => e.reason === 'NodesUnreadable'));
  c.nodes.failing = false;
  await f.round();
  assert.equal(deletes(c, bad.id), 1, 'the errored one goes once Nodes can be read');
  assert.equal(actions(c, old.id), 1, 'the old one starts its timeline with a reboot, not a deletion');
});

test('F2, F3, F4, F7 in one round, and nothing left to do in the next', async (t) => {
  const { c, clock, sgId } = await setup(t);
  await c.fx.call('network', {
    method: 'POST',
    path: '/security-group-rules',
    body: { security_group_rule: { security_group_id: sgId, direction: 'ingress', ethertype: 'IPv4', protocol: 'tcp', remote_ip_prefix: '100.100.0.0/16' } },
  });
  const ok = await c.server('kks-k1-small-okvm1', K1);
  const err = await c.server('kks-k1-small-errvm', K1);
  c.emu.store.servers.get(err.id)!.vm_state = 'error';
  c.nodes.nodes = [{ name: 'n-ok', addresses: [ok.ip], podCidrs: [], instanceId: ok.id }];
  const f = runner(c, clock, { pools: [{ name: 'small', prefix: `${c.fx.prefix}-kks-k1-small-` }] });
  const first = await f.round();
  assert.deepEqual(first.failed, []);
  assert.deepEqual(first.done.map((a) => a.kind).sort(), ['add-security-group', 'add-tags', 'create-rule', 'create-rule', 'delete-instance', 'merge-metadata']);
  const s = await c.os.nova.getServer(ok.id);
  assert.ok(s!.security_groups!.some((g) => g.name === 'k1-sg'));
  assert.deepEqual(s!.tags!.sort(), ['kubeward', 'kubeward:cluster=k1', 'kubeward:nodepool=small', 'kubeward:owner=uid-k1']);
  assert.equal(s!.metadata['kubeward:owner'], 'uid-k1', 'ownership proven by providerID is written down');
  assert.equal(s!.metadata['kubeward:node'], 'n-ok');
  const rules = (await c.os.neutron.getSecurityGroup(sgId))!.security_group_rules
    .filter((r) => r.remote_ip_prefix === '100.100.0.0/16')
    .map((r) => r.protocol)
    .sort();
  assert.deepEqual(rules, ['icmp', 'tcp', 'udp']);
  const second = await f.round();
  assert.deepEqual(second.plan.actions, [], 'a second round finds nothing to repair');
});

test('F6: the service user gets the missing role through the admin credentials', async (t) => {
  const { c, clock } = await setup(t);
  c.emu.store.roles.set('role-network_admin', { id: 'role-network_admin', name: 'network_admin' });
  const demoConfig = resolveCloudConfig({
    env: {
      OS_AUTH_URL: c.emu.authUrl,
      OS_USERNAME: 'demo',
      OS_PASSWORD: 'demo',
      OS_PROJECT_NAME: 'demo',
      OS_USER_DOMAIN_NAME: 'Default',
      OS_PROJECT_DOMAIN_NAME: 'Default',
    },
  });
  const demo = createOpenStackClient({ config: demoConfig, log: createSilentLogger() });
  const f = runner(c, clock, { checkRoles: true, wantedRoles: ['member', 'network_admin'], routerId: undefined }, openStackFlightCloud(demo, c.os));
  const first = await f.round();
  assert.deepEqual(first.done, [{ kind: 'assign-role', role: 'network_admin' }]);
  assert.equal(c.count('PUT', '/projects/project-demo/users/user-demo/roles/role-network_admin'), 1);
  const second = await f.round();
  assert.deepEqual(second.plan.actions, []);
});

test('missing route: a condition and an event; with the repair flag the route is added atomically', async (t) => {
  const { c, clock } = await setup(t);
  const a = await c.server('kks-k1-small-a', K1);
  c.nodes.nodes = [{ name: 'n-a', addresses: [a.ip], podCidrs: ['100.100.7.0/24'], instanceId: a.id }];
  const detect = await runner(c, clock).round();
  assert.deepEqual(
    detect.plan.actions.filter((x) => x.kind === 'add-route'),
    [],
  );
  assert.ok(c.nodes.conditions.some((x) => x.node === 'n-a' && x.condition.type === 'kubeward.io/RouteMissing' && x.condition.status === 'True'));
  assert.ok(c.events.some((e) => e.reason === 'RouteMissing' && e.node === 'n-a'));
  assert.deepEqual(await c.routes(), []);
  await runner(c, clock, { repairMissingRoutes: true }).round();
  assert.deepEqual(await c.routes(), [`100.100.7.0/24>${a.ip}`]);
  assert.equal(c.count('PUT', '/add_extraroutes'), 1);
});

test('Neutron and Nova failing mid-round: other repairs go on, a later round finishes the rest', async (t) => {
  const { c, clock, sgId } = await setup(t);
  const vm = await c.server('kks-k1-small-x', K1);
  c.nodes.nodes = [{ name: 'n-x', addresses: [vm.ip], podCidrs: [], instanceId: vm.id }];
  const ruleFault = c.emu.addFault({ service: 'network', method: 'POST', path: '^/security-group-rules', status: 500 });
  const tagFault = c.emu.addFault({ service: 'compute', method: 'PUT', path: '/tags/', status: 503 });
  const f = runner(c, clock, { pools: [{ name: 'small', prefix: `${c.fx.prefix}-kks-k1-small-` }] });
  const first = await f.round();
  assert.deepEqual(first.failed.map((x) => x.action.kind).sort(), ['add-tags', 'create-rule', 'create-rule', 'create-rule']);
  assert.deepEqual(first.done.map((x) => x.kind).sort(), ['add-security-group', 'merge-metadata']);
  assert.ok(c.events.some((e) => e.reason === 'FlightRepairFailed'));
  c.emu.faults.remove(ruleFault.id);
  c.emu.faults.remove(tagFault.id);
  const second = await f.round();
  assert.deepEqual(second.done.map((x) => x.kind).sort(), ['add-tags', 'create-rule', 'create-rule', 'create-rule']);
  assert.equal((await c.os.neutron.getSecurityGroup(sgId))!.security_group_rules.filter((r) => r.remote_ip_prefix === '100.100.0.0/16').length, 3);
  const novaDown = c.emu.addFault({ service: 'compute', path: '^/servers/detail', status: 500 });
  await assert.rejects(f.round(), /500/);
  c.emu.faults.remove(novaDown.id);
  assert.deepEqual((await f.round()).plan.actions, []);
});
