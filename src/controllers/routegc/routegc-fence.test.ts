// routegc stops acting the moment the leader's fence falls (harm 8, docs/test-catalogue.md: one leader acts): no
// route removal is sent once it is down, mid-cycle or mid-termination, and a cycle stopped by the
// fence is not counted as a failed cycle. Hand-written fakes record every call; the fence is manual.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '../../admin/metrics.ts';
import { ManualClock } from '../../base/clock.ts';
import { createSilentLogger } from '../../base/logger.ts';
import type { ExtraRoute, Router } from '../../clients/openstack/openstack-types.ts';
import type { ClusterNodes } from '../managed-cluster/cluster-adapters.ts';
import { inst, node, r } from '../managed-cluster/cluster-fixtures.test-helpers.ts';
import type { RouteWriteResult } from '../managed-cluster/route-writer.ts';
import { RouteGcRunner, type RouteGcCloud, type RouteGcWriter } from './routegc-cycle.ts';
import { createRouteGcMetrics } from './routegc-metrics.ts';

const LIVE = r('100.100.1.0/24', '10.0.0.1');
const ORPHAN = r('100.100.2.0/24', '10.0.0.99');

function setup(opts: { onNodeList?: () => void; onRemove?: () => void } = {}) {
  const fence = new AbortController();
  const removed: ExtraRoute[][] = [];
  let routes: ExtraRoute[] = [LIVE, ORPHAN];
  let routerReads = 0;
  const cloud: RouteGcCloud = {
    getRouter: async (id) => (routerReads++, { id, name: 'r', project_id: 'p', status: 'ACTIVE', routes, revision_number: 1 } satisfies Router),
    listServers: async () => [inst('i-1', ['10.0.0.1'])],
    heldAddresses: async () => new Set(),
  };
  const nodes: ClusterNodes = {
    list: async () => (opts.onNodeList?.(), [node('n1', ['10.0.0.1'], ['100.100.1.0/24'], 'i-1')]),
    setCondition: async () => false,
  };
  const writer: RouteGcWriter = {
    remove: async (_id, rs, signal): Promise<RouteWriteResult> => {
      removed.push(rs);
      opts.onRemove?.();
      signal?.throwIfAborted(); // as the HTTP layer does: an aborted call fails
      routes = routes.filter((x) => !rs.includes(x));
      return { method: 'atomic', changed: rs, conflicts: 0 };
    },
  };
  const registry = new Registry();
  const clock = new ManualClock(0);
  const runner = new RouteGcRunner(
    { cloud, writer, nodes, emit: async () => undefined, metrics: createRouteGcMetrics(registry), log: createSilentLogger(), clock },
    { cluster: 'k1', routerId: 'r1', clusterCidr: '100.100.0.0/16', identity: { ownerId: 'uid-k1', poolPrefixes: [] }, routeLimit: 30, dryRun: false },
  );
  const failedCycles = async () =>
    ((await registry.getMetricsAsJSON()).find((m) => m.name === 'kubeward_routegc_failed_cycles_total')?.values ?? []).reduce((n, v) => n + v.value, 0);
  return { runner, fence, removed, failedCycles, clock, routerReads: () => routerReads };
}

test('a fence that falls mid-cycle, after the view is read, stops the confirmed removal before it is sent', async () => {
  let armed = false;
  const s = setup({ onNodeList: () => armed && s.fence.abort(new Error('leadership lost')) });
  await s.runner.cycle(s.fence.signal); // first sighting of the orphan
  armed = true;
  await assert.rejects(s.runner.cycle(s.fence.signal), /leadership lost/);
  assert.deepEqual(s.removed, [], 'the second sighting confirmed the orphan, but the fence had fallen: no removal');
  assert.equal(await s.failedCycles(), 0, 'not a failed cycle: this replica stopped acting');
});

test('with the fence up the same two cycles remove the orphan (the test above can fail)', async () => {
  const s = setup();
  await s.runner.cycle(s.fence.signal);
  await s.runner.cycle(s.fence.signal);
  assert.deepEqual(s.removed, [[ORPHAN]]);
});

test('termination: a fence that falls during the removal ends the clean-up, with no retry and no further pass', async () => {
  const s = setup({ onRemove: () => s.fence.abort(new Error('leadership lost')) });
  const reads = s.routerReads();
  await assert.rejects(s.runner.removeAll(s.clock, { timeoutMs: 0, pollMs: 0, signal: s.fence.signal }), /leadership lost/);
  assert.equal(s.removed.length, 1, 'one removal went out before the fence fell, none after');
  assert.equal(s.routerReads() - reads, 1, 'the router is not read again to retry');
});

test('termination with the fence already down sends nothing', async () => {
  const s = setup();
  s.fence.abort(new Error('leadership lost'));
  await assert.rejects(s.runner.removeAll(s.clock, { timeoutMs: 0, pollMs: 0, signal: s.fence.signal }), /leadership lost/);
  assert.deepEqual(s.removed, []);
});
