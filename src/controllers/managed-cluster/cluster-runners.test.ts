import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../base/clock.ts';
import { createSilentLogger } from '../../base/logger.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import { waitFor } from '../../../testkit/wait-for.ts';
import type { ClusterClients } from './cluster-clients.ts';
import type { ConditionWish } from './cluster-conditions.ts';
import { managedClusterReconciler } from './cluster-runners.ts';
import type { ManagedCluster } from './managed-cluster.ts';

const MC: ManagedCluster = {
  metadata: { name: 'k1', namespace: 't', uid: 'u1', generation: 1 },
  spec: { kubeconfigSecretRef: { name: 'k' }, cloudCredentialsSecretRef: { name: 'c', cloud: 'x' }, clusterCIDR: '100.100.0.0/16' },
  status: { phase: 'Running' },
};

test('a run past its deadline is aborted, says so in its condition, and leaves the fence up', async () => {
  const clock = new ManualClock(0);
  const written: ConditionWish[][] = [];
  let runSignal: AbortSignal | undefined;
  const fence = new AbortController();
  const reconcile = managedClusterReconciler<object>({
    clusters: {} as ResourceClient<ManagedCluster>,
    clients: async () => ({ kube: { events: {} }, openstack: {} }) as unknown as ClusterClients,
    events: { record: async () => {} },
    clock,
    log: createSilentLogger(),
    component: 'test',
    intervalMs: 10_000,
    deadlineMs: 5000,
    cached: () => MC,
    conditionWriter: async (_mc, wishes) => void written.push(wishes),
    skip: () => undefined,
    build: () => ({}),
    // A hung cloud: the run returns only when its signal aborts.
    run: (_r, _ctx, signal) => {
      runSignal = signal;
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted call')), { once: true }));
    },
    failed: (err) => [{ type: 'TestHealthy', status: 'False', reason: 'Failed', message: String((err as Error).message) }],
  });
  const done = reconcile('t/k1', fence.signal).then(
    () => 'returned',
    (err: Error) => err,
  );
  await waitFor(() => runSignal !== undefined);
  clock.advance(4999);
  await new Promise((r) => setImmediate(r));
  assert.equal(runSignal!.aborted, false);
  clock.advance(1);
  const err = await done;
  assert.ok(err instanceof Error && /did not finish within 5000 ms/.test(err.message), String(err));
  assert.equal((err as { code?: string }).code, 'E_TIMEOUT');
  assert.equal(fence.signal.aborted, false, "the deadline is the run's own, not the leader's fence");
  assert.match(written[0]![0]!.message, /did not finish within 5000 ms/);
});

test('a runner idle for more than three intervals starts over (old sightings are no evidence after a lost lease or a shard move)', async () => {
  const clock = new ManualClock(0);
  let builds = 0;
  // The source's cache: the same clients while the Secrets stay as they are.
  const same = { kube: { events: {} }, openstack: {} } as unknown as ClusterClients;
  const reconcile = managedClusterReconciler<{ n: number }>({
    clusters: {} as ResourceClient<ManagedCluster>,
    clients: async () => same,
    events: { record: async () => {} },
    clock,
    log: createSilentLogger(),
    component: 'test',
    intervalMs: 10_000,
    cached: () => MC,
    conditionWriter: async () => {},
    skip: () => undefined,
    build: () => ({ n: ++builds }),
    run: async () => ({ wishes: [] }),
    failed: () => [],
  });
  const fence = new AbortController().signal;
  await reconcile('t/k1', fence);
  clock.advance(30_000); // three intervals: still the same runner (a late cycle is not a gap)
  await reconcile('t/k1', fence);
  assert.equal(builds, 1);
  clock.advance(30_001);
  await reconcile('t/k1', fence);
  assert.equal(builds, 2, 'rebuilt after a gap longer than three intervals');
});

test('new clients from the source (a rotated Secret) rebuild the runner on the next run, handing it the one they replace', async () => {
  let current = { kube: { events: {} }, openstack: {} } as unknown as ClusterClients;
  const built: { clients: ClusterClients; previous?: { n: number } }[] = [];
  const reconcile = managedClusterReconciler<{ n: number }>({
    clusters: {} as ResourceClient<ManagedCluster>,
    clients: async () => current,
    events: { record: async () => {} },
    clock: new ManualClock(0),
    log: createSilentLogger(),
    component: 'test',
    intervalMs: 10_000,
    cached: () => MC,
    conditionWriter: async () => {},
    skip: () => undefined,
    build: (ctx, previous) => (built.push({ clients: ctx.clients, previous }), { n: built.length }),
    run: async () => ({ wishes: [] }),
    failed: () => [],
  });
  const fence = new AbortController().signal;
  await reconcile('t/k1', fence);
  await reconcile('t/k1', fence);
  assert.equal(built.length, 1, 'the same clients: the same runner');
  const rotated = { kube: { events: {} }, openstack: {} } as unknown as ClusterClients;
  current = rotated;
  await reconcile('t/k1', fence);
  assert.equal(built.length, 2);
  assert.equal(built[1]!.clients, rotated, 'built on the new clients');
  assert.deepEqual(built[1]!.previous, { n: 1 }, 'with the runner it replaces, whose memory it may keep');
});
