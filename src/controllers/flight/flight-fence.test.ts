// flight stops acting the moment the leader's fence falls: no further reboot, delete, metadata write,
// rule change or Node condition write goes out, the round ends there, and nothing is reported as a
// failed repair. Hand-written fakes record every call; the fence is manual.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { ManualClock } from '../../base/clock.ts';
import { createSilentLogger } from '../../base/logger.ts';
import type { SecurityGroup } from '../../clients/openstack/openstack-types.ts';
import type { ClusterNodes } from '../managed-cluster/cluster-adapters.ts';
import type { ClusterEvent } from '../managed-cluster/cluster-events.ts';
import { inst, node } from '../managed-cluster/cluster-fixtures.test-helpers.ts';
import { DEFAULT_FLIGHT_TIMING } from './decide-flight.ts';
import type { FlightCloud } from './flight-cloud.ts';
import { createFlightMetrics } from './flight-metrics.ts';
import { FlightRunner } from './flight-round.ts';

const GROUP: SecurityGroup = { id: 'sg-1', name: 'k1-sg', description: '', project_id: 'p', security_group_rules: [], revision_number: 1 };

/** Two proven instances without the cluster's group, and a group without the pod-CIDR rules: several rule changes to make. */
function setup(onDestructive: (call: string) => void) {
  const calls: string[] = [];
  const events: ClusterEvent[] = [];
  const conditionWrites: string[] = [];
  const act = (call: string, signal?: AbortSignal) => {
    calls.push(call);
    onDestructive(call);
    signal?.throwIfAborted(); // as the HTTP layer does: an aborted call fails
  };
  const cloud: FlightCloud = {
    listServers: async () => [inst('i-1', ['10.0.0.1']), inst('i-2', ['10.0.0.2'])],
    listGroups: async () => [GROUP],
    createRule: async (rule, signal) => (act(`createRule ${rule.protocol}`, signal), 'rule-id'),
    deleteRule: async (id, signal) => act(`deleteRule ${id}`, signal),
    addSecurityGroup: async (id, _g, signal) => act(`addSecurityGroup ${id}`, signal),
    reboot: async (id, _t, signal) => act(`reboot ${id}`, signal),
    deleteServer: async (id, signal) => act(`deleteServer ${id}`, signal),
    addTag: async (id, tag, signal) => act(`addTag ${id} ${tag}`, signal),
    mergeMetadata: async (id, _m, signal) => act(`mergeMetadata ${id}`, signal),
    getRouter: async () => undefined,
    serviceUserRoles: async () => [],
    assignRole: async (role, signal) => act(`assignRole ${role}`, signal),
  };
  const nodes: ClusterNodes = {
    list: async () => [node('n1', ['10.0.0.1'], ['100.100.1.0/24'], 'i-1'), node('n2', ['10.0.0.2'], ['100.100.2.0/24'], 'i-2')],
    setCondition: async (n) => (conditionWrites.push(n), true),
  };
  const registry = new Registry();
  const runner = new FlightRunner(
    {
      cloud,
      nodes,
      routes: { add: async () => ({ method: 'atomic', changed: [], conflicts: 0 }) },
      emit: async (e) => void events.push(e),
      metrics: createFlightMetrics(registry),
      log: createSilentLogger(),
      clock: new ManualClock(0),
    },
    {
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
      checkRoles: false,
      dryRun: false,
    },
  );
  const metric = async (name: string) => ((await registry.getMetricsAsJSON()).find((m) => m.name === name)?.values ?? []).reduce((n, v) => n + v.value, 0);
  return { runner, calls, events, conditionWrites, metric };
}

test('with the fence up the round makes several destructive calls (the case below can fail)', async () => {
  const s = setup(() => undefined);
  const round = await s.runner.round(new AbortController().signal);
  assert.ok(s.calls.length >= 3, s.calls.join(', '));
  assert.equal(round.failed.length, 0);
});

test('a fence that falls during the first destructive call ends the round: nothing more is sent, nothing reported as failed', async () => {
  const fence = new AbortController();
  const s = setup(() => fence.abort(new Error('leadership lost')));
  await assert.rejects(s.runner.round(fence.signal), /leadership lost/);
  assert.equal(s.calls.length, 1, `only the call in flight when the fence fell: ${s.calls.join(', ')}`);
  assert.deepEqual(
    s.events.filter((e) => e.reason === 'FlightRepairFailed'),
    [],
    'a lost lease is not a failed repair',
  );
  assert.equal(await s.metric('kubeward_flight_repairs_total'), 0);
  assert.equal(await s.metric('kubeward_flight_failed_rounds_total'), 0);
  assert.deepEqual(s.conditionWrites, [], 'no Node condition written either');
});
