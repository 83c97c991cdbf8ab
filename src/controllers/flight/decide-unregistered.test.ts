// A Node protects its server: errored or unregistered-looking instances that a Node (not NotReady)
// matches by providerID, name or address are never rebooted or deleted; a stale providerID is
// reported; errored deletions count in the doubt over the whole view.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inst } from '../managed-cluster/cluster-fixtures.test-helpers.ts';
import type { ClusterInstance, ClusterNode } from '../managed-cluster/cluster-view.ts';
import { DEFAULT_FLIGHT_TIMING, decideFlight } from './decide-flight.ts';
import { emptyFlightMemory, type FlightOptions } from './flight-types.ts';

const MIN = 60_000;
const NOW = Date.parse('2026-06-01T12:00:00Z');
const OPTS: FlightOptions = {
  clusterName: 'k1',
  ownerId: 'uid-k1',
  clusterCidr: '100.100.0.0/16',
  securityGroupName: 'k1-sg',
  pools: [],
  ...DEFAULT_FLIGHT_TIMING,
  rebootBeforeDelete: true,
  wantedRoles: [],
  forceSecurityGroupResync: false,
  repairMissingRoutes: false,
  routeLimit: 30,
  maxDeletionsPerRound: 10,
  maxRebootsPerRound: 10,
};

const vm = (id: string, ip: string, extra: Partial<ClusterInstance> = {}) => inst(id, [ip], { name: `w-${id}`, createdMs: NOW - 120 * MIN, ...extra });
const nd = (name: string, ip: string, extra: Partial<ClusterNode> = {}): ClusterNode => ({ name, addresses: [ip], podCidrs: [], ready: true, ...extra });

/** Healthy registered instances that keep the "most at once" doubt out of cases that are not about it. */
const settled = Array.from({ length: 6 }, (_, i) => vm(`ok${i}`, `10.0.1.${i + 1}`));
const settledNodes = settled.map((s) => nd(s.name, s.addresses[0]!, { instanceId: s.id }));

function plan(instances: ClusterInstance[], nodes: ClusterNode[], candidates?: ClusterInstance[]) {
  return decideFlight(
    {
      nowMs: NOW,
      instances: [...instances, ...settled],
      candidates: candidates && [...candidates, ...settled],
      nodes: [...nodes, ...settledNodes],
      groups: undefined,
      serviceUserRoles: undefined,
      routes: undefined,
      memory: emptyFlightMemory(),
    },
    OPTS,
  );
}
const destroyed = (p: ReturnType<typeof plan>) =>
  [...p.actions, ...p.heldBack].flatMap((a) => (a.kind === 'reboot' || a.kind === 'delete-instance' ? [`${a.kind}:${a.instanceId}`] : [])).sort();

test('an errored instance whose Node is Ready (by providerID, by name, or by InternalIP) is not deleted and says why; a NotReady Node does not protect', () => {
  const p = plan(
    [
      vm('byid', '10.0.0.1', { vmState: 'error' }),
      vm('byname', '10.0.0.2', { vmState: 'error' }),
      vm('byip', '10.0.0.3', { vmState: 'error' }),
      vm('notready', '10.0.0.4', { vmState: 'error' }),
    ],
    [
      nd('n-byid', '10.9.9.1', { instanceId: 'byid' }),
      nd('w-byname', '10.9.9.2'),
      nd('n-byip', '10.0.0.3'),
      nd('n-notready', '10.0.0.4', { instanceId: 'notready', ready: false }),
    ],
  );
  assert.equal(p.refusal, undefined);
  assert.deepEqual(destroyed(p), ['delete-instance:notready']);
  assert.deepEqual(
    p.findings.filter((f) => f.reason === 'ErroredInstanceNodeReady').map((f) => f.node),
    ['n-byid', 'w-byname', 'n-byip'],
  );
});

test('an instance without a providerID match but with a Ready Node of its address or name is never rebooted', () => {
  const p = plan([vm('a', '10.0.0.1'), vm('b', '10.0.0.2')], [nd('other-name', '10.0.0.1'), nd('w-b', '10.9.9.9')]);
  assert.deepEqual(destroyed(p), []);
});

test("a Node whose providerID names an earlier server of the same name, with this instance's address, registers it and is reported", () => {
  const now = vm('new', '10.0.0.1', { name: 'w-host', vmState: 'error' });
  const p = plan([now], [nd('w-host', '10.0.0.1', { instanceId: 'gone-uuid', ready: false })]);
  assert.ok(
    p.findings.some((f) => f.reason === 'StaleProviderID' && f.node === 'w-host' && /gone-uuid/.test(f.message)),
    'stale providerID reported',
  );
  assert.deepEqual(p.memory.registered.includes('new'), true, 'counts as registered');
  // Not Ready: it protects nothing, but the instance is registered and so never on the reboot timeline.
  assert.deepEqual(destroyed(p), ['delete-instance:new']);
  const ready = plan([vm('new', '10.0.0.1', { name: 'w-host' })], [nd('w-host', '10.0.0.1', { instanceId: 'gone-uuid' })]);
  assert.deepEqual(destroyed(ready), []);
  // A providerID that names a server the round did see is not stale.
  const seen = plan([vm('new', '10.0.0.1', { name: 'w-host' })], [nd('w-host', '10.0.0.1', { instanceId: 'other' })], [vm('other', '10.0.0.8')]);
  assert.ok(!seen.findings.some((f) => f.reason === 'StaleProviderID'));
});

test('errored deletions count in the doubt over the whole view: most instances due at once is refused', () => {
  const instances = Array.from({ length: 4 }, (_, i) => vm(`e${i}`, `10.0.0.${i + 1}`, { vmState: 'error' }));
  const p = decideFlight(
    {
      nowMs: NOW,
      instances: [...instances, vm('ok', '10.0.1.1')],
      nodes: [nd('w-ok', '10.0.1.1', { instanceId: 'ok' })],
      groups: undefined,
      serviceUserRoles: undefined,
      routes: undefined,
      memory: emptyFlightMemory(),
    },
    OPTS,
  );
  assert.equal(p.refusal?.code, 'NodeListShrunk');
  assert.deepEqual(destroyed(p), []);
});
