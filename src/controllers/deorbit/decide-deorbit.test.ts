import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideDeorbit, type DeorbitInput } from './decide-deorbit.ts';
import { DEFAULT_DEORBIT_SETTINGS, INITIAL_PROGRESS, type DeorbitProgress, type Observation } from './deorbit-types.ts';
import { CSI, lb, pv, pvc, snap, svc, view } from './deorbit-fixtures.test-helpers.ts';

const T0 = 1_700_000_000_000;
const S = 1000;
const MIN = 60 * S;

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

const d1Cluster = view(
  {
    snapshots: [snap('snap-1')],
    pvcs: [pvc('data-0', 'pv-1'), pvc('data-1', 'pv-2'), pvc('nfs', 'pv-nfs'), pvc('pending', undefined, 'Pending')],
    pvs: [pv('pv-1', { csi: CSI, handle: 'vol-1' }), pv('pv-2', { csi: CSI, handle: 'vol-2' }), pv('pv-nfs', { nfs: true })],
    services: [svc('web'), svc('api'), svc('internal', 'ClusterIP')],
  },
  {
    volumes: [
      { id: 'vol-1', status: 'in-use' },
      { id: 'vol-2', status: 'in-use' },
    ],
    loadBalancers: [lb('lb-1', 'kube_service_k1_apps_web'), lb('lb-2', 'kube_service_k1_apps_api')],
  },
);

test('the first pass deletes snapshots, then Cinder claims, then LB Services, and starts waiting for snapshots', () => {
  const d = decideDeorbit(input(d1Cluster));
  assert.deepEqual(
    d.deletes.map((a) => `${a.kind} ${a.name}`),
    ['VolumeSnapshot snap-1', 'PersistentVolumeClaim data-0', 'PersistentVolumeClaim data-1', 'Service web', 'Service api'],
  );
  assert.deepEqual(
    d.events.map((e) => e.reason),
    ['WaitingForDeorbitSnapshots'],
  );
  assert.equal(d.outcome, 'waiting');
  assert.equal(d.requeueAfterMs, 15 * S);
  assert.equal(d.progress.attempt, 1);
  assert.equal(d.progress.attemptStartedMs, T0);
  assert.deepEqual(d.progress.remaining, { snapshots: 1, pvcs: 2, services: 2, volumes: 2, loadBalancers: 2 });
  assert.deepEqual(d.progress.leftovers.volumes, ['vol-1', 'vol-2']);
});

test('wait steps advance in order and each is over only when it and the earlier ones are', () => {
  const cases: { name: string; obs: Observation; step: DeorbitProgress['step']; wantStep: string; wantEvents: string[] }[] = [
    {
      name: 'a clean cluster finishes in one pass with every wait event',
      obs: view({}),
      step: 'deleting',
      wantStep: 'done',
      wantEvents: [
        'WaitingForDeorbitSnapshots',
        'SuccessfulDeorbitSnapshots',
        'WaitingForDeorbitPVs',
        'SuccessfulDeorbitPVs',
        'WaitingForDeorbitLoadBalancers',
        'SuccessfulDeorbitLoadBalancers',
      ],
    },
    {
      name: 'snapshots gone, volumes still there: on to the volume wait',
      obs: view({ pvs: [pv('p', { csi: CSI, handle: 'vol-1' }, { phase: 'Released' })] }, { volumes: [{ id: 'vol-1', status: 'deleting' }] }),
      step: 'snapshots',
      wantStep: 'volumes',
      wantEvents: ['SuccessfulDeorbitSnapshots', 'WaitingForDeorbitPVs'],
    },
    {
      name: 'load balancers gone but a new snapshot appeared: the LB step does not finish',
      obs: view({ snapshots: [snap('late')] }),
      step: 'loadbalancers',
      wantStep: 'loadbalancers',
      wantEvents: [],
    },
    {
      name: 'no VolumeSnapshot API at all counts as no snapshots (D9)',
      obs: view({ snapshots: undefined }),
      step: 'deleting',
      wantStep: 'done',
      wantEvents: [
        'WaitingForDeorbitSnapshots',
        'SuccessfulDeorbitSnapshots',
        'WaitingForDeorbitPVs',
        'SuccessfulDeorbitPVs',
        'WaitingForDeorbitLoadBalancers',
        'SuccessfulDeorbitLoadBalancers',
      ],
    },
  ];
  for (const c of cases) {
    const d = decideDeorbit(input(c.obs, { progress: { ...INITIAL_PROGRESS, attempt: 1, attemptStartedMs: T0, step: c.step } }));
    assert.equal(d.progress.step, c.wantStep, c.name);
    assert.deepEqual(
      d.events.map((e) => e.reason),
      c.wantEvents,
      c.name,
    );
  }
});

test('volume and load-balancer waits: what blocks and what does not', () => {
  // apps/web was seen on an earlier pass: its exact load-balancer name is the cluster's.
  const at = (step: DeorbitProgress['step']) => ({
    ...INITIAL_PROGRESS,
    attempt: 1,
    attemptStartedMs: T0,
    step,
    seenServices: [{ namespace: 'apps', name: 'web' }],
  });
  const cases: { name: string; obs: Observation; version?: string; nowMs?: number; done: boolean }[] = [
    { name: 'PV whose volume is already gone (D4)', obs: view({ pvs: [pv('p', { csi: CSI, handle: 'vol-9' })] }), done: true },
    {
      name: 'Failed PV with an existing volume (D5)',
      obs: view({ pvs: [pv('p', { csi: CSI, handle: 'vol-1' }, { phase: 'Failed' })] }, { volumes: [{ id: 'vol-1', status: 'available' }] }),
      done: true,
    },
    {
      name: 'Retain PV, Released, volume stays (D8)',
      obs: view(
        { pvs: [pv('p', { csi: CSI, handle: 'vol-1' }, { phase: 'Released', policy: 'Retain' })] },
        { volumes: [{ id: 'vol-1', status: 'available' }] },
      ),
      done: true,
    },
    {
      name: 'stuck volume (D3)',
      obs: view({ pvs: [pv('p', { csi: CSI, handle: 'vol-1' }, { phase: 'Released' })] }, { volumes: [{ id: 'vol-1', status: 'error_deleting' }] }),
      done: false,
    },
    { name: 'LB Service still held by its finalizer', obs: view({ services: [svc('web', 'LoadBalancer', { deleting: true })] }), done: false },
    {
      name: 'Service gone but Octavia LB in PENDING_DELETE (D10)',
      obs: view({}, { loadBalancers: [lb('lb-1', 'kube_service_k1_apps_web', 'PENDING_DELETE')] }),
      done: false,
    },
    { name: 'Service gone but Octavia LB in ERROR (D10)', obs: view({}, { loadBalancers: [lb('lb-1', 'kube_service_k1_apps_web', 'ERROR')] }), done: false },
    { name: "another cluster's load balancer does not block", obs: view({}, { loadBalancers: [lb('lb-9', 'kube_service_k2_apps_web')] }), done: true },
    { name: 'no Octavia in the cloud: the Service alone decides', obs: view({}, { loadBalancers: undefined }), done: true },
    {
      name: 'legacy cluster, Service stuck, within the grace period (D7)',
      obs: view({ services: [svc('web', 'LoadBalancer', { deleting: true })] }),
      version: '1.16.15',
      nowMs: T0 + 4 * MIN,
      done: false,
    },
    {
      name: 'legacy cluster, Service stuck, grace period over (D7)',
      obs: view({ services: [svc('web', 'LoadBalancer', { deleting: true })] }),
      version: '1.16.15',
      nowMs: T0 + 5 * MIN,
      done: true,
    },
    {
      name: 'legacy cluster after the grace period still waits for Octavia',
      obs: view({ services: [svc('web', 'LoadBalancer', { deleting: true })] }, { loadBalancers: [lb('x', 'kube_service_k1_apps_web')] }),
      version: '1.16.15',
      nowMs: T0 + 6 * MIN,
      done: false,
    },
  ];
  for (const c of cases) {
    const d = decideDeorbit(
      input(c.obs, {
        nowMs: c.nowMs ?? T0,
        progress: at('volumes'),
        target: { deletionStartedMs: T0, version: c.version ?? '1.30.2', loadBalancerClusterName: 'k1' },
      }),
    );
    assert.equal(d.outcome === 'done', c.done, c.name);
  }
});

test('a retained volume is reported once as a warning and kept in progress', () => {
  const obs = view(
    { pvs: [pv('p', { csi: CSI, handle: 'vol-1' }, { phase: 'Released', policy: 'Retain' })] },
    { volumes: [{ id: 'vol-1', status: 'available' }] },
  );
  const d = decideDeorbit(
    input(obs, {
      progress: { ...INITIAL_PROGRESS, attempt: 1, attemptStartedMs: T0, step: 'snapshots' },
      target: { deletionStartedMs: T0, loadBalancerClusterName: 'k1' },
    }),
  );
  assert.ok(d.events.some((e) => e.reason === 'RetainedDeorbitVolumes' && e.type === 'Warning' && e.message.includes('vol-1')));
  assert.deepEqual(d.progress.retainedVolumes, ['vol-1']);
});

test('load balancer IDs learned from annotations are still waited for after the Service is gone', () => {
  const first = decideDeorbit(
    input(view({ services: [svc('web', 'LoadBalancer', { lbId: 'lb-x' })] }, { loadBalancers: [lb('lb-x', 'kube_service_k1_apps_web')] })),
  );
  assert.deepEqual(first.progress.trackedLoadBalancers, ['lb-x']);
  const later = decideDeorbit(
    input(view({}, { loadBalancers: [lb('lb-x', 'renamed later', 'PENDING_DELETE')] }), {
      progress: { ...first.progress, step: 'loadbalancers' },
      nowMs: T0 + 30 * S,
    }),
  );
  assert.equal(later.outcome, 'waiting');
  assert.deepEqual(later.progress.leftovers.loadBalancers, ['lb-x']);
});

test('an attempt that waits past its limit fails with a Failed event and the next one starts over', () => {
  const obs = view({ pvs: [pv('p', { csi: CSI, handle: 'vol-1' }, { phase: 'Released' })] }, { volumes: [{ id: 'vol-1', status: 'error_deleting' }] });
  const progress = { ...INITIAL_PROGRESS, attempt: 1, attemptStartedMs: T0, step: 'volumes' as const };
  const before = decideDeorbit(input(obs, { progress, nowMs: T0 + 10 * MIN - 1 }));
  assert.equal(before.outcome, 'waiting');
  const d = decideDeorbit(input(obs, { progress, nowMs: T0 + 10 * MIN }));
  assert.equal(d.outcome, 'attempt-failed');
  assert.deepEqual(
    d.events.map((e) => e.reason),
    ['FailedDeorbitPVs'],
  );
  assert.equal(d.progress.attempt, 2);
  assert.equal(d.progress.step, 'deleting');
  const next = decideDeorbit(input(obs, { progress: d.progress, nowMs: T0 + 11 * MIN }));
  assert.equal(next.progress.attemptStartedMs, T0 + 11 * MIN);
  assert.deepEqual(
    next.events.map((e) => e.reason),
    ['WaitingForDeorbitSnapshots', 'SuccessfulDeorbitSnapshots', 'WaitingForDeorbitPVs'],
  );
});

test('self-destruct: hang timeout always, API unavailability only when sustained', () => {
  const down: Observation = { ok: false, source: 'cluster-api', kind: 'unavailable', message: '500 oops' };
  const noCreds: Observation = { ok: false, source: 'credentials', kind: 'unauthorized', message: 'secret missing' };
  const cloudDown: Observation = { ok: false, source: 'cloud', kind: 'unavailable', message: 'cinder 503' };
  const base = {
    ...INITIAL_PROGRESS,
    attempt: 1,
    attemptStartedMs: T0,
    step: 'volumes' as const,
    startedMs: T0,
    leftovers: { volumes: ['vol-1'], loadBalancers: ['lb-1'], floatingIps: ['fip-1'] },
  };
  const cases: { name: string; obs: Observation; nowMs: number; failingSince?: number; want: string; reason?: string }[] = [
    { name: 'one API error right after deletion: retry', obs: down, nowMs: T0 + 30 * S, want: 'failed' },
    { name: 'one API error long after deletion (Kubernikus would give up): retry', obs: down, nowMs: T0 + 3 * MIN, want: 'failed' },
    { name: 'API failing for 1m59s: retry', obs: down, nowMs: T0 + 3 * MIN, failingSince: T0 + 61 * S, want: 'failed' },
    { name: 'API failing for 2 min: give up', obs: down, nowMs: T0 + 3 * MIN, failingSince: T0 + MIN, want: 'self-destruct', reason: 'APIUnavailable' },
    { name: 'the cloud failing for long does not count as the cluster API', obs: cloudDown, nowMs: T0 + 3 * MIN, failingSince: T0, want: 'failed' },
    { name: 'credentials failing before the hang timeout: retry', obs: noCreds, nowMs: T0 + 23 * 60 * MIN, want: 'failed' },
    { name: 'credentials failing at the hang timeout: give up', obs: noCreds, nowMs: T0 + 24 * 60 * MIN, want: 'self-destruct', reason: 'DeorbitHanging' },
    {
      name: 'a healthy but stuck cluster at the hang timeout (D3)',
      obs: view(
        {},
        {
          volumes: [{ id: 'vol-1', status: 'deleting' }],
          loadBalancers: [lb('lb-1', 'kube_service_k1_apps_web', 'PENDING_DELETE', 'port-1')],
          floatingIps: [{ id: 'fip-1', portId: 'port-1' }],
        },
      ),
      nowMs: T0 + 24 * 60 * MIN,
      want: 'self-destruct',
      reason: 'DeorbitHanging',
    },
  ];
  for (const c of cases) {
    const tracked = { trackedVolumes: ['vol-1'], seenServices: [{ namespace: 'apps', name: 'web' }] };
    const d = decideDeorbit(input(c.obs, { nowMs: c.nowMs, progress: { ...base, ...tracked, apiFailingSinceMs: c.failingSince } }));
    assert.equal(d.outcome, c.want, c.name);
    assert.equal(d.progress.selfDestructReason, c.reason, c.name);
    if (c.want === 'self-destruct') {
      assert.equal(d.events[0]?.reason, 'SuccessfulDeorbitSelfDestruct');
      assert.match(d.events[0]!.message, /vol-1.*lb-1.*fip-1/, 'the debris is named in the event');
    }
  }
});

test('the give-up lists what this look found, not what an older look left in progress', () => {
  const stale = { ...INITIAL_PROGRESS, attempt: 1, attemptStartedMs: T0, startedMs: T0, step: 'volumes' as const, trackedVolumes: ['vol-1', 'vol-2'] };
  const d = decideDeorbit(
    input(view({}, { volumes: [{ id: 'vol-2', status: 'deleting' }] }), {
      nowMs: T0 + 24 * 60 * MIN,
      progress: { ...stale, leftovers: { volumes: ['vol-1'], loadBalancers: ['lb-old'], floatingIps: [] } },
    }),
  );
  assert.equal(d.outcome, 'self-destruct');
  assert.deepEqual(d.progress.leftovers, { volumes: ['vol-2'], loadBalancers: [], floatingIps: [] });
  assert.match(d.events[0]!.message, /volumes 1: vol-2; load balancers none/);
});

test('timers count from the first attempt, not from deletion: a first pass a day after deletion deletes and waits', () => {
  const obs = view({ pvcs: [pvc('data', 'pv-1')], pvs: [pv('pv-1', { csi: CSI, handle: 'vol-1' })] }, { volumes: [{ id: 'vol-1', status: 'available' }] });
  const d = decideDeorbit(input(obs, { nowMs: T0 + 25 * 60 * MIN }));
  assert.equal(d.outcome, 'waiting');
  assert.equal(d.progress.startedMs, T0 + 25 * 60 * MIN);
  assert.deepEqual(
    d.deletes.map((a) => a.name),
    ['data'],
  );
  assert.deepEqual(d.progress.trackedVolumes, ['vol-1'], 'the volume is recorded with the deletion');
  assert.deepEqual(d.recordFirst?.trackedVolumes, ['vol-1'], 'and recorded before it');
  assert.equal(d.recordFirst?.step, 'deleting', 'with the step the deletions have not yet passed');
});

test('the API failure streak starts at the first failure and any success ends it', () => {
  const down: Observation = { ok: false, source: 'cluster-api', kind: 'unavailable', message: 'refused' };
  const a = decideDeorbit(input(down, { nowMs: T0 + 10 * S }));
  assert.equal(a.progress.apiFailingSinceMs, T0 + 10 * S);
  const b = decideDeorbit(input(down, { nowMs: T0 + 40 * S, progress: a.progress }));
  assert.equal(b.progress.apiFailingSinceMs, T0 + 10 * S);
  assert.match(b.progress.lastError!, /cluster-api: refused/);
  const c = decideDeorbit(
    input(view({ pvs: [pv('p', { csi: CSI, handle: 'v' })] }, { volumes: [{ id: 'v', status: 'in-use' }] }), { nowMs: T0 + 70 * S, progress: b.progress }),
  );
  assert.equal(c.progress.apiFailingSinceMs, undefined);
  assert.equal(c.progress.lastError, undefined);
  const d = decideDeorbit(input(down, { nowMs: T0 + 200 * S, progress: c.progress }));
  assert.equal(d.outcome, 'failed', 'a new streak starts from zero');
});

test('finished and self-destructed progress is final', () => {
  assert.equal(decideDeorbit(input(d1Cluster, { progress: { ...INITIAL_PROGRESS, step: 'done' } })).outcome, 'done');
  const sd = decideDeorbit(input(d1Cluster, { progress: { ...INITIAL_PROGRESS, step: 'self-destructed' } }));
  assert.equal(sd.outcome, 'self-destruct');
  assert.deepEqual(sd.deletes, []);
  assert.deepEqual(sd.events, []);
});

test('the retained-volume warning is not repeated while the set stays the same', () => {
  const obs = view(
    { pvs: [pv('p', { csi: CSI, handle: 'vol-1' }, { phase: 'Released', policy: 'Retain' }), pv('q', { csi: CSI, handle: 'vol-2' }, { phase: 'Released' })] },
    {
      volumes: [
        { id: 'vol-1', status: 'available' },
        { id: 'vol-2', status: 'deleting' },
      ],
    },
  );
  const first = decideDeorbit(input(obs));
  const second = decideDeorbit(input(obs, { progress: first.progress, nowMs: T0 + 15 * S }));
  assert.equal(first.events.filter((e) => e.reason === 'RetainedDeorbitVolumes').length, 1);
  assert.equal(second.events.filter((e) => e.reason === 'RetainedDeorbitVolumes').length, 0);
});
