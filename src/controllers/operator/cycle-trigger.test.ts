import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ManagedCluster } from '../managed-cluster/managed-cluster.ts';
import { isCycleTrigger, isDeorbitTrigger, isRouteGcTrigger } from './cycle-trigger.ts';

function mc(o: { generation?: number; deleting?: boolean; phase?: string; rv?: string; conditions?: number } = {}): ManagedCluster {
  return {
    metadata: {
      name: 'k1',
      namespace: 't',
      generation: o.generation ?? 1,
      resourceVersion: o.rv ?? '1',
      deletionTimestamp: o.deleting ? '2024-01-01T00:00:00Z' : undefined,
    },
    spec: { kubeconfigSecretRef: { name: 'k' }, cloudCredentialsSecretRef: { name: 'c', cloud: 'x' } },
    status: { phase: o.phase, ...(o.conditions ? { conditions: Array.from({ length: o.conditions }, () => ({})) } : {}) },
  } as ManagedCluster;
}

test('which ManagedCluster changes start an early routegc or flight cycle', () => {
  const cases: [string, ManagedCluster, ManagedCluster | undefined, boolean][] = [
    ['a cluster seen for the first time', mc(), undefined, true],
    ['a spec change (new generation)', mc({ generation: 2 }), mc(), true],
    ['deletion starting', mc({ deleting: true }), mc(), true],
    ['the cluster becoming Running', mc({ phase: 'Running' }), mc({ phase: 'Creating' }), true],
    ['a status write that keeps the phase (conditions, progress)', mc({ phase: 'Running', rv: '2', conditions: 2 }), mc({ phase: 'Running' }), false],
    ['a metadata-only change (labels, finalizers)', mc({ rv: '3' }), mc(), false],
  ];
  for (const [name, obj, old, want] of cases) assert.equal(isCycleTrigger(obj, old), want, name);
});

test('deorbit is not woken by status writes, only by what its decision reads', () => {
  assert.equal(isDeorbitTrigger(mc({ rv: '2', conditions: 2 }), mc()), false, 'a condition write');
  assert.equal(isDeorbitTrigger(mc()), true, 'a new object');
  assert.equal(isDeorbitTrigger(mc({ generation: 2 }), mc()), true, 'a spec change');
  assert.equal(isDeorbitTrigger(mc({ deleting: true }), mc()), true, 'a deletion starting');
  assert.equal(isDeorbitTrigger(mc({ phase: 'Running' }), mc()), true, 'a phase change');
  const withFinalizer = mc();
  withFinalizer.metadata.finalizers = ['kubeward.io/deorbit'];
  assert.equal(isDeorbitTrigger(withFinalizer, mc()), true, 'a finalizer change');
});

test('routegc looks again when deorbit lets a deleted cluster go, not when a live one gets its finalizer', () => {
  const held = mc({ deleting: true });
  held.metadata.finalizers = ['kubeward.io/deorbit', 'other'];
  const released = mc({ deleting: true, rv: '2' });
  released.metadata.finalizers = ['other'];
  assert.equal(isRouteGcTrigger(released, held), true);
  const live = mc({ rv: '2' });
  live.metadata.finalizers = ['kubeward.io/deorbit'];
  assert.equal(isRouteGcTrigger(live, mc()), false);
});
