import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runDeorbitPass, type DeorbitPorts } from './deorbit-pass.ts';
import { DEFAULT_DEORBIT_SETTINGS, INITIAL_PROGRESS, type DeleteAction } from './deorbit-types.ts';
import { KubeApiError } from '../../clients/kube/kube-api-error.ts';
import { CSI, pv, pvc, snap, svc } from './deorbit-fixtures.test-helpers.ts';

/** A satellite and cloud that record deletes; `failOn` names objects whose delete fails, `absent` ones already gone. */
function fakes(opts: { failOn?: string; absent?: string; listFails?: KubeApiError } = {}) {
  const deleted: string[] = [];
  const ports: DeorbitPorts = {
    satellite: {
      listSnapshots: async () => [snap('s1'), snap('s2')],
      listPvcs: async () => [pvc('c1', 'pv1')],
      listPvs: async () => {
        if (opts.listFails) throw opts.listFails;
        return [pv('pv1', { csi: CSI, handle: 'vol-1' })];
      },
      listServices: async () => [svc('web')],
      delete: async (a: DeleteAction) => {
        if (a.name === opts.failOn) throw new Error('admission webhook said no');
        if (a.name === opts.absent) return 'absent';
        deleted.push(`${a.kind}/${a.name}`);
        return 'deleted';
      },
      version: async () => 'v1.30.0',
    },
    cloud: { listVolumes: async () => [{ id: 'vol-1', status: 'in-use' }], listLoadBalancers: async () => [], listFloatingIps: async () => [] },
  };
  return { ports, deleted };
}

const base = { nowMs: 1000, settings: DEFAULT_DEORBIT_SETTINGS, target: { deletionStartedMs: 0, loadBalancerClusterName: 'k1' }, progress: INITIAL_PROGRESS };

test('a pass deletes in order and reports each deletion before the wait events', async () => {
  const { ports, deleted } = fakes({ absent: 's2' });
  const r = await runDeorbitPass({ ...base, ports });
  assert.deepEqual(deleted, ['VolumeSnapshot/s1', 'PersistentVolumeClaim/c1', 'Service/web']);
  assert.deepEqual(r.events.map((e) => e.reason), ['SuccessfulDeorbitSnapshot', 'SuccessfulDeorbitPVC', 'SuccessfulDeorbitService', 'WaitingForDeorbitSnapshots']);
  assert.equal(r.deleted, 3, 'an object already gone is not counted');
  assert.equal(r.decision.outcome, 'waiting');
});

test('a failed deletion stops the pass, names the object that failed and fails the pass', async () => {
  const { ports, deleted } = fakes({ failOn: 'c1' });
  const r = await runDeorbitPass({ ...base, ports });
  assert.deepEqual(deleted, ['VolumeSnapshot/s1', 'VolumeSnapshot/s2']);
  const failed = r.events.find((e) => e.reason === 'FailedDeorbitPVC');
  assert.equal(failed?.type, 'Warning');
  assert.match(failed!.message, /apps\/c1: admission webhook said no/);
  assert.equal(r.decision.outcome, 'failed');
  assert.match(r.decision.progress.lastError!, /PersistentVolumeClaim apps\/c1/);
});

test('a cluster API failure is classified, and a credentials failure needs no ports at all', async () => {
  const { ports } = fakes({ listFails: new KubeApiError({ method: 'GET', path: '/api/v1/persistentvolumes', status: 503, message: 'unavailable' }) });
  const r = await runDeorbitPass({ ...base, ports });
  assert.equal(r.decision.outcome, 'failed');
  assert.equal(r.decision.progress.apiFailingSinceMs, 1000);
  const c = await runDeorbitPass({ ...base, ports: { failure: { ok: false, source: 'credentials', kind: 'other', message: 'secret k1-kubeconfig not found' } } });
  assert.equal(c.decision.outcome, 'failed');
  assert.equal(c.decision.progress.apiFailingSinceMs, undefined);
  assert.match(c.decision.progress.lastError!, /credentials: secret k1-kubeconfig/);
});
