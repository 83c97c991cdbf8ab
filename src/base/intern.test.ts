import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { InternTable } from './intern.ts';

test('intern returns an equal string, and keeps one entry per distinct value', () => {
  const t = new InternTable();
  const a = t.intern(JSON.parse('"https://network.example:9696/v2.0/intern-test"') as string);
  const b = t.intern(JSON.parse('"https://network.example:9696/v2.0/intern-test"') as string);
  assert.equal(a, 'https://network.example:9696/v2.0/intern-test');
  assert.equal(b, a);
  assert.deepEqual(t.size, { strings: 1, chars: a.length });
});

test('a string over 4,096 characters is returned as it is and not kept', () => {
  const t = new InternTable();
  const long = 'x'.repeat(4097);
  assert.equal(t.intern(long), long);
  assert.deepEqual(t.size, { strings: 0, chars: 0 });
});

test('intern never changes a value, and the table stays within its bound', () => {
  const t = new InternTable();
  fc.assert(fc.property(fc.string({ maxLength: 5000 }), (s) => assert.equal(t.intern(s), s)));
  assert.ok(t.size.chars <= 1 << 20);
});
