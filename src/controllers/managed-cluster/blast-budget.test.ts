import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyBudget } from './blast-budget.ts';

test('one budget never allows more than its limit, keeps order, and holds back exactly the rest', () => {
  fc.assert(
    fc.property(fc.array(fc.integer()), fc.integer({ min: -3, max: 20 }), (items, limit) => {
      const { allowed, heldBack } = applyBudget(items, limit);
      assert.equal(allowed.length, Math.min(Math.max(0, limit), items.length));
      assert.deepEqual([...allowed, ...heldBack], items);
    }),
  );
});
