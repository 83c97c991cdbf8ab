import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planAfterPass, planFinish } from './deorbit-plan.ts';
import { INITIAL_PROGRESS, type DeorbitDecision, type DeorbitEvent } from '../deorbit/deorbit-types.ts';

const ev = (reason: string): DeorbitEvent => ({ type: 'Normal', reason, message: reason });
const decision = (outcome: DeorbitDecision['outcome'], extra: Partial<DeorbitDecision> = {}): DeorbitDecision => ({
  deletes: [],
  events: [],
  progress: { ...INITIAL_PROGRESS, lastError: outcome === 'failed' ? 'cloud: 503' : undefined },
  outcome,
  heldBack: 0,
  deferred: [],
  requeueAfterMs: outcome === 'waiting' ? 15_000 : undefined,
  ...extra,
});
const kinds = (steps: { kind: string }[]) => steps.map((x) => x.kind);

test('a waiting pass records its events, writes status and requeues after the poll', () => {
  const d = decision('waiting', { pin: { kubeSystemUid: 'u', caFingerprint: 'f' } });
  assert.deepEqual(kinds(planAfterPass(d, [ev('SuccessfulDeorbitPVC')])), ['pin-identity', 'record']);
  const plan = planFinish(d, [ev('SuccessfulDeorbitPVC')], { finish: true });
  assert.deepEqual(kinds(plan.steps), ['write-status']);
  assert.deepEqual(plan.result, { requeueAfterMs: 15_000 });
});

test('done: status first, then the finalizer, then the connector forgets the cluster', () => {
  const plan = planFinish(decision('done'), [ev('SuccessfulDeorbitLoadBalancers')], { finish: true, events: [ev('SuccessfulDeorbitRoutes')] });
  assert.deepEqual(kinds(plan.steps), ['record', 'write-status', 'remove-finalizer', 'forget']);
  assert.equal(plan.finished, 'done');
  assert.deepEqual(plan.result, {});
});

test("a self-destruct's events wait until the finalizer is gone, and a failed removal is reported", () => {
  const d = decision('self-destruct');
  const events = [ev('SuccessfulDeorbitSelfDestruct')];
  assert.deepEqual(planAfterPass(d, events), [], 'nothing recorded before the finalizer goes');
  const plan = planFinish(d, events, { finish: true });
  assert.deepEqual(kinds(plan.steps), ['write-status', 'remove-finalizer', 'record', 'forget']);
  assert.deepEqual(plan.steps[1], { kind: 'remove-finalizer', failureReason: 'FailedDeorbitSelfDestruct' });
  assert.deepEqual(plan.steps[2], { kind: 'record', events });
});

test('a last check that holds keeps the finalizer: its reason goes on the condition and the check decides the requeue', () => {
  const plan = planFinish(decision('done'), [], { finish: false, requeueAfterMs: 5000, reason: 'WaitingForRoutes', message: 'routes left' });
  assert.deepEqual(plan.steps, [{ kind: 'write-status', waiting: { reason: 'WaitingForRoutes', message: 'routes left' } }]);
  assert.deepEqual(plan.result, { requeueAfterMs: 5000 });
  assert.equal(plan.finished, undefined);
});

test('a failed pass writes its status and hands the error to the work queue', () => {
  const plan = planFinish(decision('failed'), [], { finish: true });
  assert.deepEqual(kinds(plan.steps), ['write-status']);
  assert.deepEqual(plan.result, { error: 'cloud: 503' });
});
