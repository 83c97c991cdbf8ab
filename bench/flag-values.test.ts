import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { wholeNumber } from './flag-values.ts';

test('digits in range are their number; the edges are included', () => {
  assert.equal(wholeNumber('1', 1, 50), 1);
  assert.equal(wholeNumber('50', 1, 50), 50);
  assert.equal(wholeNumber('0', 0, 5), 0);
  assert.equal(wholeNumber('007', 1, 50), 7);
});

test('anything Number() would read but is not plain digits, or is out of range, is refused', () => {
  for (const text of ['', ' 5', '5 ', '1e3', '0x10', '+3', '-1', '2.0', '2.5', 'Infinity', 'NaN', '٣', '0', '51', '9'.repeat(16)]) {
    assert.equal(wholeNumber(text, 1, 50), undefined, JSON.stringify(text));
  }
});

test('property: a number in range written in decimal reads back; any other string is a number in range or refused', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 10_000 }), (n, max) => {
      assert.equal(wholeNumber(String(n), 0, max), n <= max ? n : undefined);
    }),
  );
  fc.assert(
    fc.property(fc.string(), (text) => {
      const n = wholeNumber(text, 1, 100);
      assert.ok(n === undefined || (Number.isInteger(n) && n >= 1 && n <= 100 && /^\d+$/.test(text)));
    }),
  );
});
