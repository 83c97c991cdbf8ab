import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideLifecycle, deorbitCondition, progressFromStatus, statusFromProgress } from './deorbit-lifecycle.ts';
import { DEORBIT_FINALIZER, type ManagedCluster } from './managed-cluster.ts';
import { INITIAL_PROGRESS } from '../deorbit/deorbit-types.ts';

function mc(opts: {
  phase?: 'Pending' | 'Creating' | 'Running' | 'Upgrading' | 'Terminating';
  finalizer?: boolean;
  deleting?: boolean;
  protectedOn?: boolean;
  policy?: 'Delete' | 'Orphan';
  identity?: boolean;
}): ManagedCluster {
  return {
    metadata: {
      name: 'k1',
      namespace: 't',
      finalizers: opts.finalizer ? ['other', DEORBIT_FINALIZER] : ['other'],
      deletionTimestamp: opts.deleting ? '2024-01-01T00:00:00Z' : undefined,
    },
    spec: {
      kubeconfigSecretRef: { name: 'k' },
      cloudCredentialsSecretRef: { name: 'c', cloud: 'x' },
      terminationProtection: opts.protectedOn,
      deletionPolicy: opts.policy,
    },
    status:
      opts.phase || opts.identity ? { phase: opts.phase, clusterIdentity: opts.identity ? { kubeSystemUid: 'u', caFingerprint: 'f' } : undefined } : undefined,
  };
}

test("what deorbit does at each point of a cluster's life", () => {
  const cases: [string, ManagedCluster, string][] = [
    ['Running without the finalizer: adopt it', mc({ phase: 'Running' }), 'adopt'],
    ['no phase (registered by hand): adopt it', mc({}), 'adopt'],
    ['Running with the finalizer but no identity recorded: adopt (record it)', mc({ phase: 'Running', finalizer: true }), 'adopt'],
    ['Running with the finalizer and its identity: nothing', mc({ phase: 'Running', finalizer: true, identity: true }), 'none'],
    ['Creating: not yet', mc({ phase: 'Creating' }), 'none'],
    ['Upgrading: not now', mc({ phase: 'Upgrading' }), 'none'],
    ['deleted before it ever ran (no finalizer): nothing', mc({ phase: 'Pending', deleting: true }), 'none'],
    ['deleted with the finalizer: deorbit', mc({ phase: 'Terminating', finalizer: true, deleting: true }), 'deorbit'],
    ['deleted while Running with deletionPolicy Delete: deorbit', mc({ phase: 'Running', finalizer: true, deleting: true, policy: 'Delete' }), 'deorbit'],
    ['deleted while Running, no policy (default Orphan): let go, touch nothing', mc({ phase: 'Running', finalizer: true, deleting: true }), 'orphan'],
    ['registered by hand (no phase) and deleted: let go', mc({ finalizer: true, deleting: true }), 'orphan'],
    ['deleted with deletionPolicy Orphan while Running: let go', mc({ phase: 'Running', finalizer: true, deleting: true, policy: 'Orphan' }), 'orphan'],
    ['Orphan, but its lifecycle says Terminating: deorbit', mc({ phase: 'Terminating', finalizer: true, deleting: true, policy: 'Orphan' }), 'deorbit'],
    [
      'Orphan and protected: let go (protection guards clean-up, and there is none)',
      mc({ phase: 'Running', finalizer: true, deleting: true, protectedOn: true }),
      'orphan',
    ],
    ['deleted but protected (D2): wait, touch nothing', mc({ phase: 'Terminating', finalizer: true, deleting: true, protectedOn: true }), 'protected'],
    ['protection on a running cluster still gets the finalizer', mc({ phase: 'Running', protectedOn: true }), 'adopt'],
  ];
  for (const [name, cluster, want] of cases) assert.equal(decideLifecycle(cluster), want, name);
});

test('progress survives the round trip through status', () => {
  const p = {
    ...INITIAL_PROGRESS,
    attempt: 2,
    attemptStartedMs: Date.UTC(2024, 0, 1),
    step: 'volumes' as const,
    apiFailingSinceMs: Date.UTC(2024, 0, 1, 0, 1),
    lastError: 'x',
    retainedVolumes: ['v9'],
  };
  const back = progressFromStatus(JSON.parse(JSON.stringify(statusFromProgress(p))));
  assert.deepEqual(back, { ...p, finishedMs: undefined, selfDestructReason: undefined, heldReason: undefined, startedMs: undefined });
  assert.deepEqual(progressFromStatus(undefined), INITIAL_PROGRESS);
});

test('the condition says where deorbit stands and keeps its transition time while the status holds', () => {
  const waiting = deorbitCondition(
    { ...INITIAL_PROGRESS, attempt: 1, step: 'volumes', leftovers: { volumes: ['vol-1'], loadBalancers: [], floatingIps: [] } },
    1000,
  );
  assert.equal(waiting.status, 'False');
  assert.equal(waiting.reason, 'WaitingForVolumes');
  assert.match(waiting.message, /vol-1/);
  const later = deorbitCondition({ ...INITIAL_PROGRESS, attempt: 1, step: 'loadbalancers' }, 99_000, waiting);
  assert.equal(later.lastTransitionTime, waiting.lastTransitionTime);
  const done = deorbitCondition({ ...INITIAL_PROGRESS, step: 'done' }, 120_000, later);
  assert.equal(done.status, 'True');
  assert.equal(done.reason, 'Completed');
  assert.notEqual(done.lastTransitionTime, later.lastTransitionTime);
  assert.equal(deorbitCondition('protected', 0).reason, 'TerminationProtected');
});
