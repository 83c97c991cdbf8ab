import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runDeorbitPass, type DeorbitPorts } from './deorbit-pass.ts';
import { DEFAULT_DEORBIT_SETTINGS, INITIAL_PROGRESS, type DeleteAction, type DeorbitRefusal } from './deorbit-types.ts';
import { KubeApiError } from '../../clients/kube/kube-api-error.ts';
import { CSI, pv, pvc, snap, svc } from './deorbit-fixtures.test-helpers.ts';
import { OpenStackBodyError } from '../../clients/openstack/response-body.ts';

/** A satellite and cloud that record deletes; `failOn` names objects whose delete fails, `absent` ones already gone. */
function fakes(opts: { failOn?: string; absent?: string; listFails?: KubeApiError; cloudFails?: Error } = {}) {
  const deleted: string[] = [];
  const ports: DeorbitPorts = {
    satellite: {
      listSnapshots: async () => [snap('s1'), snap('s2'), snap('backup', 'velero-class')],
      listSnapshotClasses: async () => [
        { name: 'cinder', driver: CSI },
        { name: 'velero-class', driver: 'backup.example.com' },
      ],
      listPvcs: async () => [pvc('c1', 'pv1')],
      listPvs: async () => {
        if (opts.listFails) throw opts.listFails;
        return [pv('pv1', { csi: CSI, handle: 'vol-1' })];
      },
      listServices: async () => [svc('web')],
      delete: async (a: DeleteAction, signal?: AbortSignal) => {
        signal?.throwIfAborted();
        if (a.name === opts.failOn) throw new Error('admission webhook said no');
        if (a.name === opts.absent) return 'absent';
        deleted.push(`${a.kind}/${a.name}`);
        return 'deleted';
      },
      version: async () => 'v1.30.0',
    },
    cloud: {
      listVolumes: async () => {
        if (opts.cloudFails) throw opts.cloudFails;
        return [{ id: 'vol-1', status: 'in-use' }];
      },
      listLoadBalancers: async () => [],
      listFloatingIps: async () => [],
      getVolume: async (id) => (id === 'vol-1' ? { id, status: 'in-use' } : undefined),
      getLoadBalancer: async () => undefined,
      deleteVolume: async () => 'absent' as const,
      deleteLoadBalancer: async () => 'absent' as const,
    },
  };
  return { ports, deleted };
}

const base = { nowMs: 1000, settings: DEFAULT_DEORBIT_SETTINGS, target: { deletionStartedMs: 0, loadBalancerClusterName: 'k1' }, progress: INITIAL_PROGRESS };

test('a pass deletes in order and reports each deletion before the wait events', async () => {
  const { ports, deleted } = fakes({ absent: 's2' });
  const r = await runDeorbitPass({ ...base, ports });
  assert.deepEqual(deleted, ['VolumeSnapshot/s1', 'PersistentVolumeClaim/c1', 'Service/web']);
  assert.deepEqual(
    r.events.map((e) => e.reason),
    ['SuccessfulDeorbitSnapshot', 'SuccessfulDeorbitPVC', 'SuccessfulDeorbitService', 'WaitingForDeorbitSnapshots'],
  );
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
  const c = await runDeorbitPass({
    ...base,
    ports: { failure: { ok: false, source: 'credentials', kind: 'other', message: 'secret k1-kubeconfig not found' } },
  });
  assert.equal(c.decision.outcome, 'failed');
  assert.equal(c.decision.progress.apiFailingSinceMs, undefined);
  assert.match(c.decision.progress.lastError!, /credentials: secret k1-kubeconfig/);
});

test("a snapshot of another driver's class is never deleted", async () => {
  const { ports, deleted } = fakes();
  await runDeorbitPass({ ...base, ports });
  assert.ok(!deleted.includes('VolumeSnapshot/backup'), "the backup tool's snapshot stays");
});

test('the budget holds deletions back to later passes, and the metric counts them', async () => {
  const { ports, deleted } = fakes();
  let held = 0;
  const settings = { ...DEFAULT_DEORBIT_SETTINGS, maxDeletesPerPass: 2, metrics: { refused: () => undefined, heldBack: (n: number) => void (held += n) } };
  const r = await runDeorbitPass({ ...base, settings, ports });
  assert.deepEqual(deleted, ['VolumeSnapshot/s1', 'VolumeSnapshot/s2']);
  assert.deepEqual(
    r.decision.deferred.map((a) => a.name),
    ['c1', 'web'],
  );
  assert.equal(held, 2);
});

test('a dry run decides exactly as the real run and sends nothing', async () => {
  const dry = fakes();
  const real = fakes();
  const d = await runDeorbitPass({ ...base, ports: dry.ports, dryRun: true });
  const r = await runDeorbitPass({ ...base, ports: real.ports });
  assert.deepEqual(dry.deleted, []);
  assert.deepEqual(
    d.wouldDelete.map((a) => `${a.kind}/${a.name}`),
    real.deleted,
  );
  assert.deepEqual(d.decision.progress, r.decision.progress);
});

test('once the fence falls no further deletion is sent and the pass throws', async () => {
  const { ports, deleted } = fakes();
  const fence = new AbortController();
  const del = ports.satellite.delete;
  ports.satellite.delete = async (a, signal) => {
    const out = await del(a, signal);
    fence.abort(new Error('leadership lost'));
    return out;
  };
  await assert.rejects(runDeorbitPass({ ...base, ports, signal: fence.signal }), /leadership lost/);
  assert.deepEqual(deleted, ['VolumeSnapshot/s1'], 'the first deletion went out before the fence fell, nothing after');
});

test('an unreadable cloud answer holds the pass, names the reason once, and is counted', async () => {
  const err = new OpenStackBodyError(
    'UnexpectedBody',
    { service: 'cinder', method: 'GET', path: '/volumes/detail', status: 200 },
    'expected "volumes" in the answer, got an empty object',
  );
  const { ports } = fakes({ cloudFails: err });
  const refused: DeorbitRefusal[] = [];
  const settings = { ...DEFAULT_DEORBIT_SETTINGS, metrics: { refused: (r: DeorbitRefusal) => void refused.push(r), heldBack: () => undefined } };
  const r = await runDeorbitPass({ ...base, settings, ports });
  assert.equal(r.decision.outcome, 'failed', 'held, not done');
  assert.equal(r.decision.progress.heldReason, 'CloudAnswerUnreadable');
  assert.deepEqual(
    r.events.map((e) => e.reason),
    ['DeorbitHeld'],
  );
  assert.match(r.events[0]!.message, /CloudAnswerUnreadable.*empty object/);
  const again = await runDeorbitPass({ ...base, settings, ports, progress: r.decision.progress });
  assert.deepEqual(again.events, [], 'the same reason is not announced again');
  assert.deepEqual(refused, ['CloudAnswerUnreadable', 'CloudAnswerUnreadable']);
});

test('a volume a well-formed list leaves out but a GET still finds is not gone', async () => {
  const { ports } = fakes();
  ports.cloud.listVolumes = async () => []; // short list: a scope or policy change, a partial answer
  const asked: string[] = [];
  ports.cloud.getVolume = async (id) => {
    asked.push(id);
    return { id, status: 'in-use' };
  };
  const r = await runDeorbitPass({ ...base, ports });
  assert.deepEqual(asked, ['vol-1']);
  assert.deepEqual(r.decision.progress.leftovers.volumes, ['vol-1'], 'still waited for');
});

test('a twin refuses the pass before any deletion and counts the refusal; the volumes are recorded before the first deletion', async () => {
  const { ports, deleted } = fakes();
  ports.satellite.identity = async () => ({ kubeSystemUid: 'ks', caFingerprint: 'ca' });
  const refused: DeorbitRefusal[] = [];
  const settings = { ...DEFAULT_DEORBIT_SETTINGS, metrics: { refused: (r: DeorbitRefusal) => void refused.push(r), heldBack: () => undefined } };
  const held = await runDeorbitPass({ ...base, settings, ports, twins: async () => ['other/k1'] });
  assert.deepEqual(deleted, []);
  assert.deepEqual(refused, ['ClusterIdentityConflict']);
  const order: string[] = [];
  const logged = { ...ports, satellite: { ...ports.satellite, delete: async (a: DeleteAction) => (order.push(`delete ${a.name}`), 'deleted' as const) } };
  await runDeorbitPass({ ...base, ports: logged, recordFirst: async (p) => void order.push(`record ${p.trackedVolumes.join()} at step ${p.step}`) });
  assert.deepEqual(order, ['record vol-1 at step deleting', 'delete s1', 'delete s2', 'delete c1', 'delete web']);
  assert.equal(held.decision.progress.heldReason, 'ClusterIdentityConflict');
});

test('a failed deletion that ends the pass leaves the cloud retries after it uncounted: they were not sent', async () => {
  const { ports } = fakes({ failOn: 'c1' });
  const cloudDeletes: string[] = [];
  ports.cloud.listVolumes = async () => [
    { id: 'vol-1', status: 'in-use' },
    { id: 'vol-stuck', status: 'error_deleting' },
  ];
  ports.cloud.getVolume = async (id) => (id === 'vol-stuck' ? { id, status: 'error_deleting' } : { id, status: 'in-use' });
  ports.cloud.deleteVolume = async (id) => {
    cloudDeletes.push(id);
    return 'deleted' as const;
  };
  const progress = {
    ...INITIAL_PROGRESS,
    trackedVolumes: ['vol-stuck'],
    cloudRetries: [{ id: 'vol-stuck', kind: 'volume' as const, count: 1, lastMs: -60_000 }],
  };
  const r = await runDeorbitPass({ ...base, progress, ports });
  assert.equal(r.decision.outcome, 'failed');
  assert.ok(
    r.decision.deletes.some((a) => a.name === 'vol-stuck'),
    'the retry was due in this pass',
  );
  assert.deepEqual(cloudDeletes, [], 'and never sent: the claim before it failed');
  assert.deepEqual(r.decision.progress.cloudRetries, progress.cloudRetries, 'so its count is the one before the pass');
});
