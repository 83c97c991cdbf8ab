import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Condition } from '../../clients/kube/kube-types.ts';
import { mergeConditions, nextCondition } from './cluster-conditions.ts';

const T = Date.parse('2026-06-01T12:00:00Z');
const deorbit: Condition = { type: 'DeorbitComplete', status: 'False', reason: 'WaitingForVolumes', message: 'x', lastTransitionTime: '2026-01-01T00:00:00Z' };

test('one rule for every condition: unchanged wishes write nothing, a flip moves lastTransitionTime, a new message does not', () => {
  const wish = { type: 'RouteGCHealthy', status: 'True', reason: 'RoutesClean', message: 'a' } as const;
  const first = nextCondition(undefined, wish, T)!;
  assert.equal(first.lastTransitionTime, '2026-06-01T12:00:00Z');
  assert.equal(nextCondition(first, wish, T + 1000), undefined);
  assert.equal(nextCondition(first, { ...wish, message: 'b' }, T + 1000)!.lastTransitionTime, first.lastTransitionTime);
  assert.equal(nextCondition(first, { ...wish, status: 'False' }, T + 60_000)!.lastTransitionTime, '2026-06-01T12:01:00Z');
  const merged = mergeConditions([deorbit], [wish], T, 2)!;
  assert.equal(merged[0], deorbit, "the other controllers' conditions stay as they are");
  assert.equal(merged[1]!.observedGeneration, 2);
});
