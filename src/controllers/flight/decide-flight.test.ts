import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SecurityGroup, SecurityGroupRule } from '../../clients/openstack/openstack-types.ts';
import { inst, node, r } from '../managed-cluster/cluster-fixtures.test-helpers.ts';
import type { ClusterInstance } from '../managed-cluster/cluster-view.ts';
import { DEFAULT_FLIGHT_TIMING, decideFlight } from './decide-flight.ts';
import { emptyFlightMemory, type FlightAction, type FlightMemory, type FlightObservation, type FlightOptions } from './flight-types.ts';

const MIN = 60_000;
const NOW = Date.parse('2026-06-01T12:00:00Z');
const OPTS: FlightOptions = {
  clusterName: 'k1',
  ownerId: 'uid-k1',
  clusterCidr: '100.100.0.0/16',
  securityGroupName: 'k1-sg',
  pools: [{ name: 'small', prefix: 'kks-k1-small-' }],
  ...DEFAULT_FLIGHT_TIMING,
  rebootBeforeDelete: true,
  wantedRoles: ['member', 'network_admin'],
  forceSecurityGroupResync: false,
  repairMissingRoutes: false,
  routeLimit: 30,
};

function rule(protocol: string | null, extra: Partial<SecurityGroupRule> = {}): SecurityGroupRule {
  return {
    id: `r-${protocol}`,
    security_group_id: 'sg-1',
    direction: 'ingress',
    ethertype: 'IPv4',
    protocol,
    port_range_min: null,
    port_range_max: null,
    remote_ip_prefix: '100.100.0.0/16',
    remote_group_id: null,
    project_id: 'p',
    ...extra,
  };
}
const group = (rules: SecurityGroupRule[], id = 'sg-1'): SecurityGroup => ({
  id,
  name: 'k1-sg',
  description: '',
  project_id: 'p',
  security_group_rules: rules,
  revision_number: 1,
});
const full = [rule('tcp'), rule('udp'), rule('icmp')];
/** An instance that already has everything repairs 2 and 6 would add, so cases see only their own repair. */
function vm(id: string, ageMin: number, extra: Partial<ClusterInstance> = {}): ClusterInstance {
  return inst(id, [], {
    name: id,
    createdMs: NOW - ageMin * MIN,
    securityGroups: ['k1-sg'],
    tags: ['kubeward', 'kubeward:cluster=k1', 'kubeward:nodepool=small', 'kubeward:owner=uid-k1'],
    metadata: { provisioner: 'kubeward', 'kubeward:cluster': 'k1', 'kubeward:nodepool': 'small', 'kubeward:owner': 'uid-k1' },
    ...extra,
  });
}

/**
 * A settled, registered instance and its Node are part of every observation, as in a real cluster:
 * an empty Node list is the harm-1 case, which refuses every destructive action (tested on its own).
 */
const anchorVm = () => vm('kks-k1-small-zzzzz', 600, { id: 'anchor', metadata: { ...vm('x', 0).metadata, 'kubeward:node': 'anchor-node' } });
const anchorNode = node('anchor-node', [], [], 'anchor');

function obs(p: Partial<FlightObservation>): FlightObservation {
  const base: FlightObservation = {
    nowMs: NOW,
    instances: [],
    nodes: [],
    groups: [group(full)],
    serviceUserRoles: ['member', 'network_admin'],
    routes: undefined,
    memory: emptyFlightMemory(),
    ...p,
  };
  return { ...base, instances: [...base.instances, anchorVm()], nodes: base.nodes && [...base.nodes, anchorNode] };
}
const kinds = (as: FlightAction[]) =>
  as.map(
    (a) =>
      `${a.kind}:${'instanceName' in a ? a.instanceName : 'protocol' in a ? a.protocol : 'role' in a ? a.role : 'route' in a ? a.route.destination : ''}${a.kind === 'reboot' ? `:${a.type}` : ''}`,
  );

test('F1 (Kubernikus timing, reboots off): only the unregistered VM past 45 min is deleted; the younger one follows once it crosses', () => {
  const o = { ...OPTS, rebootBeforeDelete: false, softRebootAfterMs: 45 * MIN, hardRebootAfterMs: 0, deleteAfterMs: 0 };
  const instances = [vm('kks-k1-small-abcde', 46), vm('kks-k1-small-fghjk', 44), vm('kks-k1-small-mnpqr', 120)];
  const nodes = [node('kks-k1-small-mnpqr', [])];
  const mnpqr = (i: ClusterInstance) => (i.name.endsWith('mnpqr') ? { ...i, metadata: { ...i.metadata, 'kubeward:node': 'kks-k1-small-mnpqr' } } : i);
  assert.deepEqual(kinds(decideFlight(obs({ instances: instances.map(mnpqr), nodes }), o).actions), ['delete-instance:kks-k1-small-abcde']);
  const later = decideFlight(obs({ nowMs: NOW + 2 * MIN, instances: instances.filter((i) => !i.name.endsWith('abcde')).map(mnpqr), nodes }), o);
  assert.deepEqual(kinds(later.actions), ['delete-instance:kks-k1-small-fghjk']);
});

test('F9: an unregistered VM is soft-rebooted at 10 min, hard-rebooted 5 min later and deleted 15 min after that', () => {
  let memory: FlightMemory = emptyFlightMemory();
  const timeline: string[] = [];
  for (let m = 0; m <= 40; m++) {
    const plan = decideFlight(obs({ nowMs: NOW + m * MIN, instances: [vm('kks-k1-small-abcde', 0)], memory }), OPTS);
    memory = plan.memory;
    for (const k of kinds(plan.actions)) timeline.push(`${m}m ${k}`);
    if (plan.actions.some((a) => a.kind === 'delete-instance')) break;
  }
  assert.deepEqual(timeline, ['10m reboot:kks-k1-small-abcde:SOFT', '15m reboot:kks-k1-small-abcde:HARD', '30m delete-instance:kks-k1-small-abcde']);
});

test('a VM that registers after its reboot is left alone from then on', () => {
  const first = decideFlight(obs({ instances: [vm('a', 11)] }), OPTS);
  assert.deepEqual(kinds(first.actions), ['reboot:a:SOFT']);
  const after = decideFlight(obs({ nowMs: NOW + 40 * MIN, instances: [vm('a', 51)], nodes: [node('a', [])], memory: first.memory }), OPTS);
  assert.deepEqual(
    kinds(after.actions).filter((k) => !k.startsWith('merge-metadata')),
    [],
  );
  assert.deepEqual(
    after.memory.registered.filter((id) => id !== 'anchor'),
    ['a'],
  );
});

test('a VM whose Node existed and was deleted on purpose is not rebooted or deleted, even after a restart', () => {
  const cases = [
    { name: 'remembered', memory: { ...emptyFlightMemory(), registered: ['a'] }, vm: vm('a', 600) },
    { name: 'marked on the instance', memory: emptyFlightMemory(), vm: vm('a', 600, { metadata: { ...vm('a', 0).metadata, 'kubeward:node': 'a' } }) },
  ];
  for (const c of cases) {
    const plan = decideFlight(obs({ instances: [c.vm], memory: c.memory }), OPTS);
    assert.deepEqual(kinds(plan.actions), [], c.name);
    assert.ok(
      plan.findings.some((f) => f.reason === 'NodeGone'),
      c.name,
    );
  }
});

test('a shut-off VM skips the soft reboot Nova would refuse; a building one is only deleted once stuck past all three periods', () => {
  const shutoff = decideFlight(obs({ instances: [vm('off', 12, { powerState: 4, vmState: 'stopped' })] }), OPTS);
  assert.deepEqual(kinds(shutoff.actions), ['reboot:off:HARD']);
  const building = (age: number) => kinds(decideFlight(obs({ instances: [vm('b', age, { vmState: 'building', taskState: 'spawning' })] }), OPTS).actions);
  assert.deepEqual(building(29), []);
  assert.deepEqual(building(30), ['delete-instance:b']);
});

test('instances map to Nodes by providerID first: a renamed host is registered, not rebooted', () => {
  const plan = decideFlight(obs({ instances: [vm('kks-k1-small-abcde', 60, { id: 'uuid-1' })], nodes: [node('worker-17', [], [], 'uuid-1')] }), OPTS);
  assert.deepEqual(kinds(plan.actions), ['merge-metadata:kks-k1-small-abcde']);
  assert.deepEqual(plan.actions[0], {
    kind: 'merge-metadata',
    instanceId: 'uuid-1',
    instanceName: 'kks-k1-small-abcde',
    metadata: { 'kubeward:node': 'worker-17' },
  });
});

test('F2: errored VMs are deleted at once unless already deleting; deletions are limited per round, errored first', () => {
  const instances = [vm('err-1', 1, { vmState: 'error' }), vm('err-2', 1, { vmState: 'error', taskState: 'deleting' }), vm('old', 60)];
  const memory = { ...emptyFlightMemory(), hardRebootAtMs: { old: NOW - 20 * MIN } };
  const one = decideFlight(obs({ instances, memory }), OPTS);
  assert.deepEqual(kinds(one.actions), ['delete-instance:err-1']);
  assert.deepEqual(
    one.heldBack.map((a) => a.kind === 'delete-instance' && a.instanceName),
    ['old'],
  );
  assert.match(one.findings.find((f) => f.reason === 'BudgetExhausted')?.message ?? '', /at most 1 delete action\(s\) per round: 1 wait/);
  const two = decideFlight(obs({ instances, memory }), { ...OPTS, maxDeletionsPerRound: 2 });
  assert.deepEqual(kinds(two.actions), ['delete-instance:err-1', 'delete-instance:old']);
});

test('F5: with the Node list unreadable nothing is rebooted or deleted, other repairs go on', () => {
  const instances = [vm('err', 1, { vmState: 'error' }), vm('old', 600, { securityGroups: [] })];
  const plan = decideFlight(obs({ instances, nodes: undefined, memory: { ...emptyFlightMemory(), hardRebootAtMs: { old: NOW - 60 * MIN } } }), OPTS);
  assert.deepEqual(kinds(plan.actions), ['add-security-group:old']);
  assert.match(plan.findings.find((f) => f.reason === 'NodesUnreadable')?.message ?? '', /1 errored instance/);
});

test('F5: with the Node list unreadable, a partial or shrunk instance list still holds back the other repairs', () => {
  const instances = [vm('old', 600, { securityGroups: [] })];
  const partial = decideFlight(obs({ instances, nodes: undefined, unknownServers: 1 }), OPTS);
  assert.deepEqual([partial.actions, partial.refusal?.code], [[], 'InstanceListPartial']);
  const shrunk = decideFlight(obs({ instances, nodes: undefined, memory: { ...emptyFlightMemory(), lastInstanceCount: 10 } }), OPTS);
  assert.deepEqual([shrunk.actions, shrunk.refusal?.code], [[], 'InstanceListShrunk']);
  assert.match(shrunk.refusal!.message, /the Node list could not be read/);
});

test('F3: the group is added to running VMs lacking it, not to building ones', () => {
  const instances = [vm('active', 20, { securityGroups: ['default'] }), vm('building', 1, { securityGroups: [], vmState: 'building', taskState: 'spawning' })];
  const plan = decideFlight(obs({ instances, nodes: [node('active', []), node('building', [])] }), OPTS);
  assert.deepEqual(
    plan.actions.filter((a) => a.kind === 'add-security-group'),
    [{ kind: 'add-security-group', instanceId: 'active', instanceName: 'active', group: 'k1-sg' }],
  );
});

test('F4: missing pod-CIDR rules are created; zero or several groups, or no cluster CIDR, create nothing and say why', () => {
  const cases: { name: string; groups: SecurityGroup[]; cidr?: string; want: string[]; finding?: string }[] = [
    { name: 'only tcp', groups: [group([rule('tcp')])], want: ['create-rule:udp', 'create-rule:icmp'] },
    { name: 'complete', groups: [group(full)], want: [] },
    { name: 'numbers count as names', groups: [group([rule('6'), rule('17'), rule('1')])], want: [] },
    { name: 'any protocol covers all', groups: [group([rule(null)])], want: [] },
    {
      name: 'a port range is not the whole protocol',
      groups: [group([rule('tcp', { port_range_min: 80, port_range_max: 80 }), rule('udp'), rule('icmp')])],
      want: ['create-rule:tcp'],
    },
    {
      name: 'another prefix does not count',
      groups: [group([rule('tcp', { remote_ip_prefix: '10.0.0.0/8' }), rule('udp'), rule('icmp')])],
      want: ['create-rule:tcp'],
    },
    { name: 'two groups', groups: [group([]), group([], 'sg-2')], want: [], finding: 'SecurityGroupAmbiguous' },
    { name: 'no group', groups: [], want: [], finding: 'SecurityGroupMissing' },
    { name: 'no cluster CIDR', groups: [group([])], cidr: '', want: [], finding: 'ClusterCIDRInvalid' },
  ];
  for (const c of cases) {
    const plan = decideFlight(obs({ groups: c.groups }), { ...OPTS, clusterCidr: c.cidr ?? OPTS.clusterCidr });
    assert.deepEqual(kinds(plan.actions), c.want, c.name);
    if (c.finding)
      assert.ok(
        plan.findings.some((f) => f.reason === c.finding),
        c.name,
      );
  }
});

test('F6: a service user with only member gets network_admin; role names compare without case', () => {
  assert.deepEqual(kinds(decideFlight(obs({ serviceUserRoles: ['member'] }), OPTS).actions), ['assign-role:network_admin']);
  assert.deepEqual(kinds(decideFlight(obs({ serviceUserRoles: ['Member', 'network_admin'] }), OPTS).actions), []);
});

test('F7: a running VM without tags gets one tag call and one metadata merge; a labelled one gets none', () => {
  const bare = inst('kks-k1-small-abcde', [], { createdMs: NOW, securityGroups: ['k1-sg'] });
  const plan = decideFlight(obs({ instances: [bare], nodes: [node('kks-k1-small-abcde', [])] }), OPTS);
  assert.deepEqual(plan.actions, [
    {
      kind: 'add-tags',
      instanceId: bare.id,
      instanceName: bare.name,
      tags: ['kubeward', 'kubeward:cluster=k1', 'kubeward:nodepool=small', 'kubeward:owner=uid-k1'],
    },
    {
      kind: 'merge-metadata',
      instanceId: bare.id,
      instanceName: bare.name,
      metadata: {
        provisioner: 'kubeward',
        'kubeward:cluster': 'k1',
        'kubeward:nodepool': 'small',
        'kubeward:owner': 'uid-k1',
        'kubeward:node': 'kks-k1-small-abcde',
      },
    },
  ]);
  const labelled = {
    ...bare,
    tags: ['kubeward', 'kubeward:cluster=k1', 'kubeward:nodepool=small', 'kubeward:owner=uid-k1'],
    metadata: {
      provisioner: 'kubeward',
      'kubeward:cluster': 'k1',
      'kubeward:nodepool': 'small',
      'kubeward:owner': 'uid-k1',
      'kubeward:node': 'kks-k1-small-abcde',
    },
  };
  assert.deepEqual(decideFlight(obs({ instances: [labelled], nodes: [node('kks-k1-small-abcde', [])] }), OPTS).actions, []);
});

test('the forced group resync happens only behind its flag and only for Nodes with broken pod traffic', () => {
  const nodes = [{ ...node('n1', []), podNetworkBroken: true }, node('n2', [])];
  assert.deepEqual(decideFlight(obs({ nodes }), OPTS).actions, []);
  assert.deepEqual(decideFlight(obs({ nodes }), { ...OPTS, forceSecurityGroupResync: true }).actions, [
    { kind: 'resync-security-group', groupId: 'sg-1', nodes: ['n1'] },
  ]);
  assert.deepEqual(decideFlight(obs({ nodes: [node('n2', [])] }), { ...OPTS, forceSecurityGroupResync: true }).actions, []);
});

test('missing routes: a condition per Node, and with the flag a route to add within the limit', () => {
  const instances = [vm('a', 60, { addresses: ['10.0.0.11'] }), vm('b', 60, { addresses: ['10.0.0.12'] }), vm('c', 60, { addresses: ['10.0.0.13'] })];
  const nodes = [node('a', ['10.0.0.11'], ['100.100.1.0/24']), node('b', ['10.0.0.12'], ['100.100.2.0/24']), node('c', ['10.0.0.13'], ['100.100.3.0/24'])];
  const routes = [r('100.100.1.0/24', '10.0.0.11'), r('100.100.3.0/24', '10.0.0.11')];
  const seen = decideFlight(obs({ instances, nodes, routes }), OPTS);
  const missing = seen.conditions.filter((c) => c.type === 'kubeward.io/RouteMissing');
  assert.deepEqual(
    missing.map((c) => `${c.node}:${c.status}`),
    ['a:False', 'b:True', 'c:True'],
  );
  assert.match(missing[2]!.message, /routed to 10.0.0.11, not to this Node/);
  assert.deepEqual(
    seen.actions.filter((a) => a.kind === 'add-route'),
    [],
    'detection only without the flag',
  );
  const repaired = decideFlight(obs({ instances, nodes, routes }), { ...OPTS, repairMissingRoutes: true });
  assert.deepEqual(
    repaired.actions.filter((a) => a.kind === 'add-route').map((a) => a.kind === 'add-route' && `${a.route.destination}>${a.route.nexthop}`),
    ['100.100.2.0/24>10.0.0.12', '100.100.3.0/24>10.0.0.13'],
  );
  const full30 = Array.from({ length: 29 }, (_, i) => r(`10.${i}.0.0/16`, '10.0.0.11'));
  const limited = decideFlight(obs({ instances, nodes, routes: [...routes, ...full30].slice(0, 29) }), { ...OPTS, repairMissingRoutes: true });
  assert.equal(limited.actions.filter((a) => a.kind === 'add-route').length, 1, 'one slot left under the limit of 30');
  assert.ok(limited.findings.some((f) => f.reason === 'RouteLimitReached' && f.node === 'c'));
});

test('route conflicts: duplicate routes for a pod CIDR and next hops of deleted instances set kubeward.io/RouteConflict', () => {
  const instances = [vm('a', 60, { addresses: ['10.0.0.11'] }), vm('b', 60, { addresses: ['10.0.0.12'] })];
  const nodes = [node('a', ['10.0.0.11'], ['100.100.1.0/24']), node('b', ['10.0.0.12'], ['100.100.2.0/24'])];
  const routes = [r('100.100.1.0/24', '10.0.0.11'), r('100.100.1.0/24', '10.0.0.12'), r('100.100.2.0/24', '10.0.0.12'), r('100.100.2.0/24', '10.0.0.99')];
  const plan = decideFlight(obs({ instances, nodes, routes }), OPTS);
  const conflicts = plan.conditions.filter((c) => c.type === 'kubeward.io/RouteConflict');
  assert.deepEqual(
    conflicts.map((c) => `${c.node}:${c.status}:${c.reason}`),
    ['a:True:DuplicateRoutes', 'b:True:StaleNextHop'],
  );
  assert.match(conflicts[1]!.message, /10.0.0.99, which is no live instance/);
});

test('harm 1: an empty Node list (or one that hides most of the cluster) reboots, deletes, labels and opens nothing; the timeline does not move', () => {
  const instances = [vm('kks-k1-small-aaaaa', 60), vm('kks-k1-small-bbbbb', 60, { vmState: 'error' }), vm('kks-k1-small-ccccc', 60, { tags: [] })];
  const bare = { nowMs: NOW, instances, nodes: [], groups: [group([])], serviceUserRoles: ['member'], routes: undefined, memory: emptyFlightMemory() };
  const empty = decideFlight(bare, OPTS);
  assert.deepEqual(kinds(empty.actions), ['assign-role:network_admin'], 'only the role check, which does not depend on the lists');
  assert.deepEqual(empty.refusal?.code, 'NodeListEmpty');
  assert.ok(empty.findings.some((f) => f.reason === 'NodeListEmpty'));
  assert.deepEqual([empty.memory.softRebootAtMs, empty.memory.hardRebootAtMs], [{}, {}]);
  // Four instances, one Node: three due for a reboot at once is a wrong Node list, not three broken VMs.
  const most = decideFlight(
    {
      ...bare,
      groups: [group(full)],
      serviceUserRoles: undefined,
      instances: [...instances.slice(0, 1), vm('kks-k1-small-ddddd', 60), vm('kks-k1-small-eeeee', 60), anchorVm()],
      nodes: [anchorNode],
    },
    OPTS,
  );
  assert.deepEqual(most.actions, []);
  assert.equal(most.refusal?.code, 'NodeListShrunk');
  const shrunk = decideFlight(obs({ instances: [vm('kks-k1-small-aaaaa', 60)], nodes: [], memory: { ...emptyFlightMemory(), lastNodeCount: 10 } }), OPTS);
  assert.equal(shrunk.refusal?.code, 'NodeListShrunk');
});

test('a Nova list with UNKNOWN servers (a down cell) is partial: no destructive repair that round', () => {
  const plan = decideFlight(obs({ instances: [vm('kks-k1-small-aaaaa', 60, { vmState: 'error' })], unknownServers: 1 }), OPTS);
  assert.deepEqual(plan.actions, []);
  assert.equal(plan.refusal?.code, 'InstanceListPartial');
});

test("harm 5: rules are never created for /0, a too wide CIDR, or one that does not hold the Nodes' pod CIDRs", () => {
  for (const [cidr, extra] of [
    ['0.0.0.0/0', { allowWide: true }],
    ['::/0', { allowWide: true }],
    ['10.0.0.0/4', {}],
  ] as const) {
    const plan = decideFlight(obs({ groups: [group([])] }), { ...OPTS, clusterCidr: cidr, ...extra });
    assert.deepEqual(
      plan.actions.filter((a) => a.kind === 'create-rule'),
      [],
      cidr,
    );
    assert.ok(
      plan.findings.some((f) => f.reason === 'ClusterCIDRInvalid'),
      cidr,
    );
  }
  const outside = decideFlight(obs({ groups: [group([])], nodes: [node('n', [], ['10.9.0.0/24'])] }), OPTS);
  assert.deepEqual(
    outside.actions.filter((a) => a.kind === 'create-rule'),
    [],
  );
  assert.ok(outside.findings.some((f) => f.reason === 'PodCIDROutsideClusterCIDR'));
  const wideOk = decideFlight(obs({ groups: [group([])] }), { ...OPTS, clusterCidr: '10.0.0.0/4', allowWide: true });
  assert.deepEqual(
    wideOk.actions.filter((a) => a.kind === 'create-rule').map((a) => a.kind === 'create-rule' && a.remoteCidr),
    ['10.0.0.0/4', '10.0.0.0/4', '10.0.0.0/4'],
  );
});

test('budgets: reboots, metadata writes and rule changes per round; a held-back reboot is not recorded as done', () => {
  const instances = ['aaaaa', 'bbbbb', 'ccccc'].map((x) => vm(`kks-k1-small-${x}`, 11));
  const nodes = ['n1', 'n2', 'n3', 'n4'].map((n) => node(n, []));
  const withNodes = [...instances, ...['n1', 'n2', 'n3', 'n4'].map((n) => vm(n, 600, { metadata: { ...vm('x', 0).metadata, 'kubeward:node': n } }))];
  const plan = decideFlight(obs({ instances: withNodes, nodes }), { ...OPTS, maxRebootsPerRound: 2 });
  assert.equal(plan.actions.filter((a) => a.kind === 'reboot').length, 2);
  assert.equal(plan.heldBack.filter((a) => a.kind === 'reboot').length, 1);
  const held = plan.heldBack[0]!;
  assert.ok(held.kind === 'reboot' && plan.memory.softRebootAtMs[held.instanceId] === undefined);
  const rules = decideFlight(obs({ groups: [group([])] }), { ...OPTS, maxRuleChangesPerRound: 1 });
  assert.deepEqual(kinds(rules.actions), ['create-rule:udp']);
  assert.ok(rules.findings.some((f) => f.reason === 'BudgetExhausted' && /rule/.test(f.message)));
});
