import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../base/clock.ts';
import { createSilentLogger } from '../../base/logger.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import { DEFAULT_DEORBIT_SETTINGS } from '../deorbit/deorbit-types.ts';
import type { DeorbitPorts } from '../deorbit/deorbit-pass.ts';
import { svc } from '../deorbit/deorbit-fixtures.test-helpers.ts';
import { deorbitReconciler } from './deorbit-reconciler.ts';
import { DEORBIT_FINALIZER, type ManagedCluster } from './managed-cluster.ts';

function setup(mc: ManagedCluster, onDelete: (name: string) => void = () => undefined, settings = DEFAULT_DEORBIT_SETTINGS) {
  const writes: string[] = [];
  const deleted: string[] = [];
  const events: string[] = [];
  const statuses: ManagedCluster['status'][] = [];
  const messages: string[] = [];
  const clusters = {
    get: async () => structuredClone(mc),
    replaceStatus: async (obj: ManagedCluster) => {
      writes.push('status');
      statuses.push(obj.status);
      return obj;
    },
    patch: async () => {
      writes.push('finalizers');
      return mc;
    },
  } as unknown as ResourceClient<ManagedCluster>;
  const ports: DeorbitPorts = {
    satellite: {
      listSnapshots: async () => undefined,
      listSnapshotClasses: async () => undefined,
      listPvcs: async () => [],
      listPvs: async () => [],
      listServices: async () => [svc('a'), svc('b'), svc('c')],
      delete: async (a, signal) => {
        signal?.throwIfAborted();
        deleted.push(a.name);
        onDelete(a.name);
        return 'deleted';
      },
      version: async () => 'v1.30.0',
    },
    cloud: {
      listVolumes: async () => [],
      listLoadBalancers: async () => [],
      listFloatingIps: async () => [],
      getVolume: async () => undefined,
      getLoadBalancer: async () => undefined,
      deleteVolume: async () => 'absent' as const,
      deleteLoadBalancer: async () => 'absent' as const,
    },
  };
  const reconcile = deorbitReconciler({
    clusters,
    connector: { connect: async () => ports, forget: () => undefined },
    events: {
      record: async (_o, _t, reason, message) => {
        events.push(reason);
        messages.push(message);
      },
    },
    settings,
    clock: new ManualClock(Date.parse('2026-01-01T00:00:10Z')),
    log: createSilentLogger(),
  });
  return { reconcile, writes, deleted, events, statuses, messages };
}

const deleted = (policy?: 'Delete' | 'Orphan'): ManagedCluster => ({
  metadata: { name: 'k1', namespace: 't', uid: 'u', resourceVersion: '1', finalizers: [DEORBIT_FINALIZER], deletionTimestamp: '2026-01-01T00:00:00Z' },
  spec: { kubeconfigSecretRef: { name: 'k' }, cloudCredentialsSecretRef: { name: 'c', cloud: 'x' }, deletionPolicy: policy },
  status: { phase: 'Running' },
});

test('when the fence falls in the middle of a pass, nothing more is deleted and no status or finalizer is written', async () => {
  const fence = new AbortController();
  const s = setup(deleted('Delete'), () => fence.abort(new Error('leadership lost')));
  await assert.rejects(s.reconcile('t/k1', fence.signal), /leadership lost/);
  assert.deepEqual(s.deleted, ['a'], 'one deletion went out before the fence fell, none after');
  assert.deepEqual(s.writes, ['status'], 'only the record of what to wait for, made before the first deletion; none after the fence fell');
  assert.deepEqual(
    s.statuses[0]?.deorbit?.seenServices?.map((x) => x.name),
    ['a', 'b', 'c'],
    'the Services whose names prove their load balancers were recorded first',
  );
});

test('a deleted cluster without deletionPolicy (Orphan) loses only the finalizer: no deletion, one event', async () => {
  const s = setup(deleted(undefined));
  await s.reconcile('t/k1', new AbortController().signal);
  assert.deepEqual(s.deleted, []);
  assert.deepEqual(s.writes, ['finalizers']);
  assert.deepEqual(s.events, ['DeorbitSkipped']);
});

test('operator dry run: the same decision reported in an event and the condition; nothing deleted, no finalizer, no progress kept', async () => {
  const s = setup(deleted('Delete'), undefined, { ...DEFAULT_DEORBIT_SETTINGS, dryRun: true, maxDeletesPerPass: 2 });
  const r = await s.reconcile('t/k1', new AbortController().signal);
  assert.deepEqual(s.deleted, []);
  assert.deepEqual(s.writes, ['status'], 'the condition only');
  assert.deepEqual(s.events, ['DeorbitDryRun']);
  assert.match(s.messages[0]!, /would delete now 2: Service apps\/a, Service apps\/b; later \(budget\) 1: Service apps\/c/);
  const st = s.statuses[0]!;
  assert.equal(st?.deorbit, undefined, 'no progress kept');
  assert.equal(st?.phase, 'Running', 'the phase is left alone');
  assert.equal(st?.conditions?.[0]?.reason, 'DryRun');
  assert.equal(r?.requeueAfterMs, DEFAULT_DEORBIT_SETTINGS.pollIntervalMs);
  const orphan = setup(deleted(undefined), undefined, { ...DEFAULT_DEORBIT_SETTINGS, dryRun: true });
  await orphan.reconcile('t/k1', new AbortController().signal);
  assert.deepEqual(orphan.writes, [], 'an Orphan cluster keeps its finalizer in a dry run');
  assert.match(orphan.messages[0]!, /dry run: .*would remove the finalizer/);
});
