// The guards of a deorbit pass, decided without I/O: the pinned cluster identity, backups and kept
// objects, claims pods still mount, re-created Services, reused load balancers, and the bounded
// retries of cloud deletes that fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideDeorbit, type DeorbitInput } from './decide-deorbit.ts';
import { judgeCloudLeftovers } from './cloud-retry-rules.ts';
import { judgeInUse } from './in-use-rules.ts';
import { judgeRecreated } from './recreate-rules.ts';
import { DEFAULT_DEORBIT_SETTINGS, INITIAL_PROGRESS, type Observation, type PodView, type WorkloadView } from './deorbit-types.ts';
import { CSI, lb, pv, pvc, snap, svc, view } from './deorbit-fixtures.test-helpers.ts';
import type { PersistentVolumeClaim, Service } from '../../clients/kube/kube-types.ts';

const T0 = 1_700_000_000_000;
const S = 1000;
const ID = { kubeSystemUid: 'ks-1', caFingerprint: 'ab'.repeat(32) };

function input(observation: Observation, extra: Partial<DeorbitInput> = {}): DeorbitInput {
  return {
    nowMs: T0,
    settings: DEFAULT_DEORBIT_SETTINGS,
    target: { deletionStartedMs: T0, version: '1.30.2', loadBalancerClusterName: 'k1' },
    progress: INITIAL_PROGRESS,
    observation,
    ...extra,
  };
}

const withIdentity = (obs: Observation, identity = ID): Observation => (obs.ok ? { ...obs, satellite: { ...obs.satellite, identity } } : obs);
const cluster = view(
  { pvcs: [pvc('data', 'pv-1')], pvs: [pv('pv-1', { csi: CSI, handle: 'vol-1' })], services: [svc('web')] },
  { volumes: [{ id: 'vol-1', status: 'in-use' }] },
);

test('identity: another cluster behind the kubeconfig, or a live twin, deletes nothing and says why once', () => {
  const moved = decideDeorbit(input(withIdentity(cluster, { ...ID, kubeSystemUid: 'ks-2' }), { pinned: ID }));
  assert.deepEqual(moved.deletes, []);
  assert.equal(moved.progress.heldReason, 'ClusterIdentityChanged');
  assert.deepEqual(
    moved.events.map((e) => e.reason),
    ['DeorbitRefused'],
  );
  const again = decideDeorbit(input(withIdentity(cluster, { ...ID, kubeSystemUid: 'ks-2' }), { pinned: ID, progress: moved.progress, nowMs: T0 + 15 * S }));
  assert.deepEqual(again.events, [], 'said once');
  const newCa = decideDeorbit(input(withIdentity(cluster, { ...ID, caFingerprint: 'cd'.repeat(32) }), { pinned: ID }));
  assert.equal(newCa.progress.heldReason, 'ClusterIdentityChanged', 'a new CA is another cluster too');
  const twin = decideDeorbit(input(withIdentity(cluster), { pinned: ID, twins: ['other/k1'] }));
  assert.deepEqual(twin.deletes, []);
  assert.equal(twin.progress.heldReason, 'ClusterIdentityConflict');
  assert.match(twin.events[0]!.message, /other\/k1/);
  const same = decideDeorbit(input(withIdentity(cluster), { pinned: ID }));
  assert.equal(same.deletes.length, 2, 'the adopted cluster, alone: deorbit proceeds');
  const unpinned = decideDeorbit(input(withIdentity(cluster)));
  assert.deepEqual(unpinned.pin, ID, 'a cluster adopted without an identity has it recorded on the first pass');
});

test('backups and objects labelled keep are kept (and listed) unless the cluster opts in', () => {
  const kept = (o: PersistentVolumeClaim | Service) => ({ ...o, metadata: { ...o.metadata, labels: { 'kubeward.io/deorbit': 'keep' } } });
  const obs = view(
    {
      snapshots: [snap('nightly', 'cinder-backup'), snap('hourly')],
      snapshotClasses: [
        { name: 'cinder', driver: CSI },
        { name: 'cinder-backup', driver: CSI, parameters: { type: 'backup' } },
      ],
      pvcs: [pvc('data', 'pv-1'), kept(pvc('precious', 'pv-2')) as PersistentVolumeClaim],
      pvs: [pv('pv-1', { csi: CSI, handle: 'vol-1' }), pv('pv-2', { csi: CSI, handle: 'vol-2' })],
      services: [kept(svc('ingress')) as Service],
    },
    { volumes: [{ id: 'vol-2', status: 'in-use' }] },
  );
  const d = decideDeorbit(input(obs));
  assert.deepEqual(
    d.deletes.map((a) => `${a.kind} ${a.name}`),
    ['VolumeSnapshot hourly', 'PersistentVolumeClaim data'],
  );
  assert.deepEqual(d.progress.kept, ['PersistentVolumeClaim apps/precious', 'Service apps/ingress', 'VolumeSnapshot apps/nightly']);
  assert.deepEqual(d.progress.leftovers.volumes, [], 'the kept claim’s volume is not waited for');
  const all = decideDeorbit(
    input(obs, { target: { deletionStartedMs: T0, loadBalancerClusterName: 'k1', policy: { deleteBackups: true, deleteKept: true } } }),
  );
  assert.deepEqual(
    all.deletes.map((a) => `${a.kind} ${a.name}`),
    ['VolumeSnapshot nightly', 'VolumeSnapshot hourly', 'PersistentVolumeClaim data', 'PersistentVolumeClaim precious', 'Service ingress'],
  );
});

const pod = (name: string, claim: string, owner?: { kind: string; name: string; uid: string }): PodView => ({
  metadata: { name, namespace: 'apps', uid: `uid-${name}`, ownerReferences: owner ? [{ apiVersion: 'apps/v1', ...owner, controller: true }] : undefined },
  spec: { nodeName: 'n1', volumes: [{ persistentVolumeClaim: { claimName: claim } }] },
  status: { phase: 'Pending' },
});

test('in-use claims: the Deployment behind a ReplicaSet, a StatefulSet, and the pods go; a bare pod goes alone; ended pods hold nothing', () => {
  const held = (name: string): PersistentVolumeClaim => ({
    ...pvc(name, 'pv'),
    metadata: { ...pvc(name, 'pv').metadata, deletionTimestamp: 'x', finalizers: ['kubernetes.io/pvc-protection'] },
  });
  const rs: WorkloadView = {
    metadata: {
      name: 'web-1',
      namespace: 'apps',
      uid: 'rs-1',
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-1', controller: true }],
    },
  };
  const done: PodView = { ...pod('old', 'c'), status: { phase: 'Succeeded' } };
  const j = judgeInUse(
    [held('a'), held('b'), held('c'), pvc('free', 'pv')],
    [
      pod('web-1-x', 'a', { kind: 'ReplicaSet', name: 'web-1', uid: 'rs-1' }),
      pod('db-0', 'b', { kind: 'StatefulSet', name: 'db', uid: 'ss-1' }),
      pod('bare', 'b'),
      done,
    ],
    [rs],
  );
  assert.deepEqual(j.blocked, ['apps/a: apps/web-1-x', 'apps/b: apps/db-0, apps/bare']);
  assert.deepEqual(
    j.deletes.map((a) => `${a.kind} ${a.name}`),
    ['Deployment web', 'StatefulSet db', 'Pod web-1-x', 'Pod db-0', 'Pod bare'],
  );
});

test('in-use claims: only the claims deorbit deleted itself; pods on another driver, a kept claim or a claim someone else deleted stay', () => {
  const held = (name: string, pvName: string, labels?: Record<string, string>): PersistentVolumeClaim => ({
    ...pvc(name, pvName),
    metadata: { ...pvc(name, pvName).metadata, labels, deletionTimestamp: 'x', finalizers: ['kubernetes.io/pvc-protection'] },
  });
  const deploy = (name: string, claim: string): PodView => pod(`${name}-x`, claim, { kind: 'Deployment', name, uid: `d-${name}` });
  const obs = view({
    pvcs: [held('own', 'pv-own'), held('nfs', 'pv-nfs'), held('kept', 'pv-kept', { 'kubeward.io/deorbit': 'keep' }), held('theirs', 'pv-theirs')],
    pvs: [
      pv('pv-own', { csi: CSI, handle: 'vol-own' }),
      pv('pv-nfs', { nfs: true }),
      pv('pv-kept', { csi: CSI, handle: 'vol-kept' }),
      pv('pv-theirs', { csi: CSI, handle: 'vol-theirs' }),
    ],
    pods: [deploy('own', 'own'), deploy('nfs', 'nfs'), deploy('kept', 'kept'), deploy('theirs', 'theirs')],
    replicaSets: [],
  });
  // vol-kept is recorded too: a keep label set after deorbit deleted the claim still keeps its pods.
  const progress = { ...INITIAL_PROGRESS, trackedVolumes: ['vol-kept', 'vol-own'] };
  const d = decideDeorbit(input(obs, { progress }));
  assert.deepEqual(
    d.deletes.map((a) => `${a.kind} ${a.name}`),
    ['Deployment own', 'Pod own-x'],
  );
  assert.deepEqual(d.progress.claimsInUse, ['apps/own: apps/own-x']);
});

test('re-created Services are named with their managers; the same UID is not a re-creation', () => {
  const back: Service = {
    ...svc('web'),
    metadata: {
      ...svc('web').metadata,
      uid: 'uid-new',
      managedFields: [
        { manager: 'openstack-cloud-controller-manager', time: '2024-01-01T00:01:00Z' },
        { manager: 'argocd-controller', time: '2024-01-01T00:00:00Z' },
      ],
    } as Service['metadata'],
  };
  assert.deepEqual(
    judgeRecreated(
      [back, svc('api')],
      [
        { namespace: 'apps', name: 'web', uid: 'uid-web' },
        { namespace: 'apps', name: 'api', uid: 'uid-api' },
      ],
    ),
    ['apps/web (uid uid-new) by argocd-controller, openstack-cloud-controller-manager'],
  );
  const p = { ...INITIAL_PROGRESS, deletedServices: [{ namespace: 'apps', name: 'web', uid: 'uid-web' }] };
  const d = decideDeorbit(input(view({ services: [back] }), { progress: p }));
  assert.deepEqual(d.deletes, [], 'deleting it again would churn a load balancer per pass');
  assert.equal(d.progress.heldReason, 'ServiceRecreated');
});

test('a load balancer reused by annotation (its own name) is never the cluster’s; one named for the Service is', () => {
  const obs = view(
    { services: [svc('web', 'LoadBalancer', { lbId: 'lb-shared' }), svc('api', 'LoadBalancer', { lbId: 'lb-api' })] },
    { loadBalancers: [lb('lb-shared', 'ingress-of-three-clusters'), lb('lb-api', 'kube_service_k1_apps_api')] },
  );
  const d = decideDeorbit(input(obs));
  assert.deepEqual(d.progress.trackedLoadBalancers, ['lb-api']);
  const later = decideDeorbit(
    input(view({}, { loadBalancers: [lb('lb-shared', 'ingress-of-three-clusters', 'ERROR'), lb('lb-api', 'x', 'PENDING_DELETE')] }), {
      progress: d.progress,
      nowMs: T0 + 15 * S,
    }),
  );
  assert.deepEqual(later.progress.leftovers.loadBalancers, ['lb-api']);
  assert.deepEqual(later.deletes, [], 'the reused one in ERROR is not deleted either');
});

test('cloud retries: error_deleting and a volume its driver left are deleted again one poll apart, then reported by ID', () => {
  const base = {
    settings: { maxCloudRetries: 2, pollIntervalMs: 15 * S },
    trackedVolumes: ['vol-bad', 'vol-left', 'vol-slow'],
    pvWaits: [],
    volumes: [
      { id: 'vol-bad', status: 'error_deleting' },
      { id: 'vol-left', status: 'available' },
      { id: 'vol-slow', status: 'deleting' },
    ],
    pvVolumeIds: new Set<string>(),
    loadBalancers: [lb('lb-err', 'n', 'ERROR')],
    lbServicesLeft: false,
  };
  let retries = judgeCloudLeftovers({ ...base, nowMs: T0, retries: [] });
  assert.deepEqual(
    retries.retryDeletes.map((a) => `${a.kind} ${a.name}`),
    ['CinderVolume vol-bad', 'CinderVolume vol-left', 'LoadBalancer lb-err'],
  );
  assert.deepEqual(retries.waitingVolumes, ['vol-bad', 'vol-left', 'vol-slow']);
  const soon = judgeCloudLeftovers({ ...base, nowMs: T0 + S, retries: retries.retries });
  assert.deepEqual(soon.retryDeletes, [], 'not again before a poll has passed');
  retries = judgeCloudLeftovers({ ...base, nowMs: T0 + 15 * S, retries: retries.retries });
  assert.equal(retries.retryDeletes.length, 3);
  const spent = judgeCloudLeftovers({ ...base, nowMs: T0 + 30 * S, retries: retries.retries });
  assert.deepEqual(spent.retryDeletes, []);
  assert.deepEqual(
    spent.failed.map((f) => f.id),
    ['vol-bad', 'vol-left', 'lb-err'],
  );
  assert.deepEqual(spent.waitingVolumes, ['vol-slow'], 'still deleting: still waited for');
  assert.match(spent.failed[0]!.message, /vol-bad is still error_deleting after 2 deletes/);
  const stillClaimed = judgeCloudLeftovers({ ...base, pvVolumeIds: new Set(['vol-left']), lbServicesLeft: true, nowMs: T0, retries: [] });
  assert.deepEqual(
    stillClaimed.retryDeletes.map((a) => a.name),
    ['vol-bad'],
    "a volume its PV still names is the driver's to delete; an ERROR load balancer its Service still holds is the cloud controller's",
  );
});

test('cloud retries count only deletes sent: the ones the budget holds back are sent in later passes before any is given up', () => {
  const ids = ['vol-1', 'vol-2', 'vol-3', 'vol-4', 'vol-5', 'vol-6', 'vol-7'];
  const obs = view({}, { volumes: ids.map((id) => ({ id, status: 'error_deleting' })) });
  const sent = new Map<string, number>();
  let progress = { ...INITIAL_PROGRESS, trackedVolumes: ids };
  const first = decideDeorbit(input(obs, { progress }));
  assert.equal(first.deletes.length, DEFAULT_DEORBIT_SETTINGS.maxDeletesPerPass);
  assert.deepEqual(
    first.progress.cloudRetries.map((r) => `${r.id} ${r.count}`),
    first.deletes.map((a) => `${a.name} 1`),
    'the two held back are not counted',
  );
  for (let pass = 0; pass < 20 && progress.failedDeletes.length < ids.length; pass++) {
    const d = decideDeorbit(input(obs, { progress, nowMs: T0 + pass * 15 * S }));
    for (const a of d.deletes) sent.set(a.name, (sent.get(a.name) ?? 0) + 1);
    progress = d.progress;
  }
  assert.deepEqual(progress.failedDeletes, ids, 'every one given up in the end');
  assert.deepEqual(
    ids.map((id) => sent.get(id)),
    ids.map(() => DEFAULT_DEORBIT_SETTINGS.maxCloudRetries),
    'and each only after its deletes were all sent',
  );
});

test('the final check lists load balancers created since the first attempt, not proven the cluster’s, and leaves them alone', () => {
  const made = { ...lb('lb-new', 'kube_service_k1_apps_web'), createdMs: T0 + 20 * S };
  const old = { ...lb('lb-old', 'someone-elses'), createdMs: T0 - 3_600_000 };
  const p = { ...INITIAL_PROGRESS, attempt: 1, attemptStartedMs: T0, startedMs: T0, step: 'loadbalancers' as const };
  const d = decideDeorbit(input(view({}, { loadBalancers: [made, old] }), { progress: p, nowMs: T0 + 30 * S }));
  assert.equal(d.outcome, 'done');
  assert.deepEqual(d.progress.createdDuring, ['lb-new']);
  assert.deepEqual(d.deletes, []);
  assert.ok(d.events.some((e) => e.reason === 'DeorbitLoadBalancersCreatedMeanwhile' && /lb-new/.test(e.message)));
});
