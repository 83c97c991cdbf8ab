import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { planTrim, type TrimState } from './plan-memory-trim.ts';

test('the first quiet interval after a busy one trims; quiet ones after it and busy ones do not', () => {
  let s: TrimState = { accepted: 0, busySinceTrim: false };
  const steps = [5, 500, 3000, 3010, 3020, 3500, 3501].map((accepted) => {
    const r = planTrim(s, accepted);
    s = r.next;
    return r.trim;
  });
  assert.deepEqual(steps, [false, false, false, true, false, false, true]);
});

test('property: never a trim in a busy interval, and at most one per busy stretch', () => {
  fc.assert(
    fc.property(fc.array(fc.nat(200), { maxLength: 60 }), (deltas) => {
      let s: TrimState = { accepted: 0, busySinceTrim: false };
      let accepted = 0;
      let trimsSinceBusy = 0;
      for (const d of deltas) {
        accepted += d;
        const r = planTrim(s, accepted);
        if (d > 10) {
          assert.equal(r.trim, false);
          trimsSinceBusy = 0;
        } else if (r.trim) {
          trimsSinceBusy++;
          assert.ok(trimsSinceBusy <= 1);
        }
        s = r.next;
      }
    }),
  );
});
