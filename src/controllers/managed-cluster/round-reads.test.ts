// One read per cluster and round for routegc and flight (round-reads.ts): the other controller takes
// the read once, within the window; a controller never takes its own read again, a read past the
// window or a failed one is never shared, and routegc's cycle and flight's round side by side, on
// the real runners, make one router, one servers and one Node list call between them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '../../admin/metrics.ts';
import { ManualClock } from '../../base/clock.ts';
import { createSilentLogger } from '../../base/logger.ts';
import type { Router, SecurityGroup } from '../../clients/openstack/openstack-types.ts';
import { openStackFlightCloud, type FlightCloud } from '../flight/flight-cloud.ts';
import { DEFAULT_FLIGHT_TIMING } from '../flight/decide-flight.ts';
import { createFlightMetrics } from '../flight/flight-metrics.ts';
import { FlightRunner } from '../flight/flight-round.ts';
import { RouteGcRunner, type RouteGcCloud } from '../routegc/routegc-cycle.ts';
import { createRouteGcMetrics } from '../routegc/routegc-metrics.ts';
import type { ClusterNodes } from './cluster-adapters.ts';
import { inst, node, r } from './cluster-fixtures.test-helpers.ts';
import { firstCycleOnly, ROUND_READ_WINDOW_MS, roundReads, roundReadCluster, sharedCloud, sharedNodeList } from './round-reads.ts';

function counter<T>(value: () => T) {
  const c = { calls: 0, read: async () => (c.calls++, value()) };
  return c;
}

test('the other controller takes a read once; the reader itself, a third read and a later one read again', async () => {
  const clock = new ManualClock(1000);
  const reads = roundReads({ clock });
  const servers = counter(() => ['s1']);
  const rg = reads.of('ns/k1#u1', 'routegc');
  const fl = reads.of('ns/k1#u1', 'flight');
  assert.deepEqual(await rg('servers', servers.read), ['s1']);
  assert.deepEqual(await fl('servers', servers.read), ['s1']);
  assert.equal(servers.calls, 1, 'flight took routegc read');
  assert.equal(reads.size, 0, 'taken by both: gone');
  // Both took it: neither controller's next cycle sees it again.
  await fl('servers', servers.read);
  assert.equal(servers.calls, 2);
  // A controller never takes its own read twice (its next cycle, or a retry after a failure).
  await fl('servers', servers.read);
  assert.equal(servers.calls, 3);
  // Another cluster, or the same name with another UID, shares nothing.
  await reads.of('ns/k1#u2', 'routegc')('servers', servers.read);
  assert.equal(servers.calls, 4);
});

test('a read is offered for the window only, and nothing is kept after it', async () => {
  const clock = new ManualClock(0);
  const reads = roundReads({ clock });
  const nodes = counter(() => ['n1']);
  const rg = reads.of('c', 'routegc');
  const fl = reads.of('c', 'flight');
  await rg('nodes', nodes.read);
  clock.advance(ROUND_READ_WINDOW_MS + 1);
  await fl('nodes', nodes.read);
  assert.equal(nodes.calls, 2, 'a read older than the window is not shared');
  assert.equal(reads.size, 1, "flight's own read is on offer");
  clock.advance(ROUND_READ_WINDOW_MS + 1);
  await rg('router/r1', async () => 'router');
  assert.equal(reads.size, 1, 'the old entry is pruned when the next read starts');
  clock.advance(ROUND_READ_WINDOW_MS);
  await fl('nodes', nodes.read);
  assert.equal(nodes.calls, 3);
});

test('a failed or aborted read is not shared: the controller that waited reads on its own', async () => {
  const clock = new ManualClock(0);
  const reads = roundReads({ clock });
  const rg = reads.of('c', 'routegc');
  const fl = reads.of('c', 'flight');
  let fail!: (e: Error) => void;
  const first = rg('servers', () => new Promise<string[]>((_, reject) => (fail = reject)));
  const own = counter(() => ['fresh']);
  const second = fl('servers', own.read);
  fail(new Error('Nova said 503'));
  await assert.rejects(first, /503/);
  assert.deepEqual(await second, ['fresh']);
  assert.equal(own.calls, 1);
  assert.equal(reads.size, 0, 'neither the failed read nor the taken one is on offer');
  // A read that already failed is not offered at all.
  await assert.rejects(rg('nodes', async () => Promise.reject(new Error('API down'))));
  await fl('nodes', own.read);
  assert.equal(own.calls, 2);
});

test("a joiner whose own fence fell while it waited gets no view, not the other controller's", async () => {
  const clock = new ManualClock(0);
  const reads = roundReads({ clock });
  let done!: (v: string[]) => void;
  const first = reads.of('c', 'routegc')('servers', () => new Promise<string[]>((res) => (done = res)));
  const fence = new AbortController();
  const second = reads.of('c', 'flight')('servers', async () => ['own'], fence.signal);
  fence.abort(new Error('lost the lease'));
  done(['s']);
  assert.deepEqual(await first, ['s']);
  await assert.rejects(second, /lost the lease/);
});

const ROUTER = (routes = [r('100.100.1.0/24', '10.0.0.1'), r('100.100.9.0/24', '10.0.0.99')]): Router => ({
  id: 'r1',
  name: 'r',
  project_id: 'p',
  status: 'ACTIVE',
  routes,
  revision_number: 1,
});
const GROUP: SecurityGroup = { id: 'sg-1', name: 'k1-sg', description: '', project_id: 'p', security_group_rules: [], revision_number: 1 };

test("routegc's cycle and flight's round side by side make one router, one servers and one Node list call", async () => {
  const clock = new ManualClock(0);
  const reads = roundReads({ clock });
  const calls: Record<string, number> = {};
  const count = (k: string) => (calls[k] = (calls[k] ?? 0) + 1);
  // Each read waits a turn, so both runners have asked before any answer comes: the worst case for sharing.
  const slow = async <T>(k: string, v: T): Promise<T> => (count(k), await new Promise((res) => setImmediate(res)), v);
  const servers = [inst('i-1', ['10.0.0.1'], { name: 'kks-k1-small-1' })];
  const rgCloud: RouteGcCloud = {
    getRouter: () => slow('router', ROUTER()),
    listServers: () => slow('servers', servers),
    heldAddresses: async () => new Set(),
  };
  const flCloud: FlightCloud = {
    ...openStackFlightCloud({} as never),
    listServers: () => slow('servers', servers),
    getRouter: () => slow('router', ROUTER()),
    listGroups: async () => (count('groups'), [GROUP]),
    serviceUserRoles: async () => [],
  };
  const nodes: ClusterNodes = { list: () => slow('nodes', [node('n1', ['10.0.0.1'], ['100.100.1.0/24'], 'i-1')]), setCondition: async () => false };
  const cluster = roundReadCluster('ns/k1', 'uid-1');
  const log = createSilentLogger();
  const routegc = new RouteGcRunner(
    {
      cloud: sharedCloud(rgCloud, reads.of(cluster, 'routegc')),
      writer: { remove: async () => assert.fail('dry run') },
      nodes: sharedNodeList(nodes, reads.of(cluster, 'routegc')),
      emit: async () => {},
      metrics: createRouteGcMetrics(new Registry()),
      log,
      clock,
    },
    {
      cluster: 'ns/k1',
      routerId: 'r1',
      clusterCidr: '100.100.0.0/16',
      identity: { ownerId: 'uid-1', poolPrefixes: ['kks-k1-small-'] },
      routeLimit: 100,
      dryRun: true,
    },
  );
  const flight = new FlightRunner(
    {
      cloud: sharedCloud(flCloud, reads.of(cluster, 'flight')),
      nodes: sharedNodeList(nodes, reads.of(cluster, 'flight')),
      routes: { add: async () => assert.fail('dry run') },
      emit: async () => {},
      metrics: createFlightMetrics(new Registry()),
      log,
      clock,
    },
    {
      ...DEFAULT_FLIGHT_TIMING,
      clusterName: 'k1',
      ownerId: 'uid-1',
      clusterCidr: '100.100.0.0/16',
      securityGroupName: 'k1-sg',
      pools: [{ name: 'small', prefix: 'kks-k1-small-' }],
      routerId: 'r1',
      rebootBeforeDelete: true,
      wantedRoles: [],
      forceSecurityGroupResync: false,
      repairMissingRoutes: false,
      routeLimit: 100,
      checkRoles: false,
      dryRun: true,
    },
  );
  const [gc, fl] = await Promise.all([routegc.cycle(), flight.round()]);
  assert.deepEqual(calls, { router: 1, servers: 1, nodes: 1, groups: 1 });
  // Both decided on the full view: routegc found the orphan (a first sighting), flight saw the route of n1.
  assert.deepEqual(
    gc.decision?.pending.map((p) => p.route.destination),
    ['100.100.9.0/24'],
  );
  assert.equal(fl.plan.refusal, undefined);
  assert.ok(fl.plan.conditions.some((c) => c.node === 'n1' && c.type === 'kubeward.io/RouteMissing' && c.status === 'False'));
  // The next round reads again: nothing of this round is kept for it.
  clock.advance(30_000);
  await Promise.all([routegc.cycle(), flight.round()]);
  assert.deepEqual(calls, { router: 2, servers: 2, nodes: 2, groups: 2 });
});

test('firstCycleOnly: a runner shares each of its first reads, and reads on its own after', async () => {
  const clock = new ManualClock(0);
  const reads = roundReads({ clock });
  const servers = counter(() => ['s']);
  const router = counter(() => 'r');
  const rg = firstCycleOnly(reads.of('c', 'routegc'));
  const fl = firstCycleOnly(reads.of('c', 'flight'));
  await rg('router/r1', router.read);
  await fl('servers', servers.read);
  await rg('servers', servers.read);
  await fl('router/r1', router.read);
  assert.deepEqual([router.calls, servers.calls], [1, 1], 'the first round: one read of each');
  // Second cycles within the window still read on their own: neither offers nor takes.
  await fl('servers', servers.read);
  await rg('servers', servers.read);
  assert.equal(servers.calls, 3);
  assert.equal(reads.size, 0, 'nothing offered after the first cycle');
});
