import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyBudgets, DEFAULT_BUDGETS } from './blast-budget.ts';
import { doubtAboutView, type ViewCounts } from './view-doubt.ts';
import { pickRouteWriteMethod } from './route-writer.ts';

test('the view is doubted when a list is empty or lost more than half, or Nova listed a server as UNKNOWN', () => {
  const cases: [Partial<ViewCounts>, boolean, string | undefined][] = [
    [{ nodes: 3, instances: 3 }, false, undefined],
    [{ nodes: 3, instances: 3, unknownServers: 1 }, false, 'InstanceListPartial'],
    [{ nodes: 0, instances: 2 }, false, 'NodeListEmpty'],
    [{ nodes: 0, instances: 0 }, false, undefined],
    [{ nodes: 0, instances: 0 }, true, 'NodeListEmpty'],
    [{ nodes: 4, instances: 10, lastNodes: 10 }, false, 'NodeListShrunk'],
    [{ nodes: 5, instances: 10, lastNodes: 10 }, false, undefined],
    [{ nodes: 2, instances: 0 }, false, 'InstanceListEmpty'],
    [{ nodes: 2, instances: 1, lastInstances: 3 }, false, 'InstanceListShrunk'],
  ];
  for (const [c, always, want] of cases) {
    assert.equal(doubtAboutView({ nodes: 0, instances: 0, unknownServers: 0, ...c }, { emptyNodesAlwaysDoubt: always })?.code, want, JSON.stringify(c));
  }
});

test('budgets keep items in order until their kind is spent; unbudgeted items always pass', () => {
  const items = ['r1', 'd1', 'r2', 'x', 'r3', 'd2'];
  const kind = (i: string) => (i[0] === 'r' ? 'reboot' : i[0] === 'd' ? 'delete' : undefined);
  const out = applyBudgets(items, kind, { ...DEFAULT_BUDGETS, reboot: 2, delete: 0 });
  assert.deepEqual(out.allowed, ['r1', 'r2', 'x']);
  assert.deepEqual(out.heldBack, ['d1', 'r3', 'd2']);
  assert.deepEqual(out.heldBackByKind, { delete: 2, reboot: 1 });
});

test('harm 9: If-Match is used only where Neutron lists revision-if-match; atomic calls first', () => {
  assert.equal(pickRouteWriteMethod(new Set(['extraroute-atomic', 'revision-if-match'])), 'atomic');
  assert.equal(pickRouteWriteMethod(new Set(['revision-if-match', 'extraroute'])), 'revision');
  assert.equal(pickRouteWriteMethod(new Set(['extraroute', 'standard-attr-revisions'])), 'plain');
});
