import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../base/clock.ts';
import { createSilentLogger } from '../../base/logger.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import { clusterConditionWriter } from './cluster-status.ts';
import type { ManagedCluster } from './managed-cluster.ts';

const MC: ManagedCluster = {
  metadata: { name: 'k1', namespace: 't' },
  spec: { kubeconfigSecretRef: { name: 's' }, cloudCredentialsSecretRef: { name: 's', cloud: 'x' } },
};
const WISH = { type: 'RouteGCHealthy', status: 'True' as const, reason: 'Healthy', message: 'ok' };

test('conditions are written while the fence is up, and not once it has fallen', async () => {
  const writes: unknown[] = [];
  const clusters = { replaceStatus: async (obj: ManagedCluster) => (writes.push(obj.status), obj) } as unknown as ResourceClient<ManagedCluster>;
  const write = clusterConditionWriter({ clusters, clock: new ManualClock(0), log: createSilentLogger() });
  await write(MC, [WISH], new AbortController().signal);
  assert.equal(writes.length, 1);
  const fence = new AbortController();
  fence.abort(new Error('leadership lost'));
  await write(MC, [WISH], fence.signal);
  assert.equal(writes.length, 1, 'a replica that lost its lease writes no status');
});

test("two controllers' wishes for one cluster become one write on the newest object, with no 409", async () => {
  const writes: ManagedCluster[] = [];
  let rv = 1;
  let release!: () => void;
  const first = new Promise<void>((r) => (release = r));
  const clusters = {
    replaceStatus: async (obj: ManagedCluster) => {
      if (obj.metadata.resourceVersion !== String(rv)) throw Object.assign(new Error('conflict'), { status: 409 });
      if (writes.length === 0) await first;
      writes.push(obj);
      rv++;
      return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } };
    },
    get: async () => assert.fail('no re-read needed'),
  } as unknown as ResourceClient<ManagedCluster>;
  const mc = { ...MC, metadata: { ...MC.metadata, resourceVersion: '1' } };
  const write = clusterConditionWriter({ clusters, clock: new ManualClock(0), log: createSilentLogger() });
  const a = write(mc, [WISH]);
  // While routegc's write is in flight, flight and routegc again: both wait and go out as one write.
  const b = write(mc, [{ type: 'FlightHealthy', status: 'True', reason: 'Healthy', message: 'ok' }]);
  const c = write(mc, [{ ...WISH, message: 'still ok' }]);
  release();
  await Promise.all([a, b, c]);
  assert.equal(writes.length, 2);
  assert.deepEqual(
    writes[1]!.status?.conditions?.map((x) => `${x.type}:${x.message}`),
    ['RouteGCHealthy:still ok', 'FlightHealthy:ok'],
  );
  assert.equal(writes[1]!.metadata.resourceVersion, '2', "the second write used the first one's answer, not the stale object");
});

test("gather: a cluster's first conditions of routegc and flight go out as one write; the first caller does not wait for it", async () => {
  const writes: ManagedCluster[] = [];
  const clusters = {
    replaceStatus: async (obj: ManagedCluster) => (writes.push(obj), { ...obj, metadata: { ...obj.metadata, resourceVersion: String(writes.length + 1) } }),
  } as unknown as ResourceClient<ManagedCluster>;
  const clock = new ManualClock(0);
  const write = clusterConditionWriter({ clusters, clock, log: createSilentLogger(), gather: { writers: 2, gatherMs: 3000 } });
  await write(MC, [WISH]);
  assert.equal(writes.length, 0, "routegc's first conditions wait for flight's");
  await write(MC, [{ type: 'FlightHealthy', status: 'True', reason: 'Healthy', message: 'ok' }]);
  assert.equal(writes.length, 1);
  assert.deepEqual(
    writes[0]!.status?.conditions?.map((x) => x.type),
    ['RouteGCHealthy', 'FlightHealthy'],
  );
  clock.advance(3000);
  await new Promise((r) => setImmediate(r));
  assert.equal(writes.length, 1, 'the timer of the gathered write writes nothing more');
  // Conditions the cluster already holds are written at once: only first conditions wait.
  const held: ManagedCluster = { ...MC, status: { conditions: writes[0]!.status!.conditions } };
  await write(held, [{ ...WISH, status: 'False', reason: 'Failed', message: 'router gone' }]);
  assert.equal(writes.length, 2);
});

test('gather: when the other controller does not write (skipped, slow), the first conditions go out after gatherMs; a fallen fence writes nothing', async () => {
  const writes: ManagedCluster[] = [];
  const clusters = { replaceStatus: async (obj: ManagedCluster) => (writes.push(obj), obj) } as unknown as ResourceClient<ManagedCluster>;
  const clock = new ManualClock(0);
  const write = clusterConditionWriter({ clusters, clock, log: createSilentLogger(), gather: { writers: 2, gatherMs: 3000 } });
  await write(MC, [WISH], new AbortController().signal);
  clock.advance(2999);
  await new Promise((r) => setImmediate(r));
  assert.equal(writes.length, 0);
  clock.advance(1);
  for (let i = 0; i < 5 && writes.length === 0; i++) await new Promise((r) => setImmediate(r));
  assert.equal(writes.length, 1);
  assert.deepEqual(
    writes[0]!.status?.conditions?.map((x) => x.type),
    ['RouteGCHealthy'],
  );
  const fence = new AbortController();
  const other: ManagedCluster = { ...MC, metadata: { ...MC.metadata, name: 'k2' } };
  await write(other, [WISH], fence.signal);
  fence.abort(new Error('leadership lost'));
  clock.advance(3000);
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  assert.equal(writes.length, 1, 'a replica that lost its lease while the write waited writes nothing');
});
