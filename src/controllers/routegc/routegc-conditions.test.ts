// routegc's conditions through the shared merge rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Condition } from '../../clients/kube/kube-types.ts';
import { mergeConditions } from '../managed-cluster/cluster-conditions.ts';
import { r } from '../managed-cluster/cluster-fixtures.test-helpers.ts';
import type { RouteGcDecision } from './decide-routegc.ts';
import { routeGcConditions, ROUTE_LIMIT_CONDITION, ROUTEGC_CONDITION } from './routegc-conditions.ts';

const T = Date.parse('2026-06-01T12:00:00Z');
const deorbit: Condition = { type: 'DeorbitComplete', status: 'False', reason: 'WaitingForVolumes', message: 'x', lastTransitionTime: '2026-01-01T00:00:00Z' };

function decision(extra: Partial<RouteGcDecision> = {}): RouteGcDecision {
  return {
    remove: [],
    pending: [],
    unresolved: [],
    heldBack: [],
    heldByPort: [],
    counts: { seen: 2, ours: 2, orphaned: 0, duplicate: 0 },
    routeLimit: { count: 2, limit: 30, approaching: false },
    memory: { suspects: {} },
    ...extra,
  };
}

test("merging adds new conditions, keeps the other controllers' ones, and reports no change for the same wishes", () => {
  const wishes = routeGcConditions({ result: { decision: decision(), removed: [], conflicts: 0 } }, false);
  const first = mergeConditions([deorbit], wishes, T, 3)!;
  assert.deepEqual(
    first.map((c) => c.type),
    ['DeorbitComplete', ROUTE_LIMIT_CONDITION, ROUTEGC_CONDITION],
  );
  assert.equal(first[0], deorbit);
  assert.equal(first[2]!.observedGeneration, 3);
  assert.equal(mergeConditions(first, wishes, T + 60_000, 3), undefined, 'a steady cluster costs no status write');
});

test('lastTransitionTime moves when the status flips, not when only the message changes', () => {
  const near = routeGcConditions(
    { result: { decision: decision({ routeLimit: { count: 28, limit: 30, approaching: true } }), removed: [], conflicts: 0 } },
    false,
  );
  const a = mergeConditions([], near, T)!;
  const limit = (cs: Condition[]) => cs.find((c) => c.type === ROUTE_LIMIT_CONDITION)!;
  assert.equal(limit(a).status, 'True');
  const nearer = routeGcConditions(
    { result: { decision: decision({ routeLimit: { count: 29, limit: 30, approaching: true } }), removed: [], conflicts: 0 } },
    false,
  );
  const b = mergeConditions(a, nearer, T + 60_000)!;
  assert.equal(limit(b).lastTransitionTime, limit(a).lastTransitionTime);
  assert.match(limit(b).message, /29 of at most 30/);
  const c = mergeConditions(b, routeGcConditions({ result: { decision: decision(), removed: [], conflicts: 0 } }, false), T + 120_000)!;
  assert.equal(limit(c).status, 'False');
  assert.equal(limit(c).lastTransitionTime, '2026-06-01T12:02:00Z');
});

test("routegc's summary: refused, unresolved duplicates and failures are False; pending and dry run are True with what they would do", () => {
  const reason = (o: Parameters<typeof routeGcConditions>[0], dry = false) => routeGcConditions(o, dry).find((c) => c.type === ROUTEGC_CONDITION)!;
  assert.equal(
    reason({ result: { decision: decision({ refusal: 'the instance list is empty while 2 Node(s) exist' }), removed: [], conflicts: 0 } }).reason,
    'Refused',
  );
  assert.equal(
    reason({
      result: { decision: decision({ unresolved: [{ route: r('100.100.4.0/24', '10.0.0.1'), reason: 'duplicate', detail: '' }] }), removed: [], conflicts: 0 },
    }).status,
    'False',
  );
  const pending = reason({
    result: { decision: decision({ pending: [{ route: r('100.100.2.0/24', '10.0.0.99'), reason: 'orphaned', detail: '' }] }), removed: [], conflicts: 0 },
  });
  assert.deepEqual([pending.status, pending.reason], ['True', 'RemovalPending']);
  assert.match(pending.message, /100\.100\.2\.0\/24 via 10\.0\.0\.99/);
  const would = [{ route: r('100.100.2.0/24', '10.0.0.99'), reason: 'orphaned' as const, detail: '' }];
  assert.equal(reason({ result: { decision: decision({ remove: would }), removed: would, conflicts: 0 } }, true).reason, 'DryRun');
  const failed = routeGcConditions({ error: new Error('nova said 500') }, false);
  assert.deepEqual(
    failed.map((c) => [c.type, c.status, c.reason]),
    [[ROUTEGC_CONDITION, 'False', 'CycleFailed']],
    'a failed cycle leaves the route-limit condition as it was',
  );
});
