import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../base/clock.ts';
import { createSilentLogger } from '../../base/logger.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import { clusterConditionWriter } from './cluster-status.ts';
import type { ManagedCluster } from './managed-cluster.ts';

const MC: ManagedCluster = { metadata: { name: 'k1', namespace: 't' }, spec: { kubeconfigSecretRef: { name: 's' }, cloudCredentialsSecretRef: { name: 's', cloud: 'x' } } };
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
