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
