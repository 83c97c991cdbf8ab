import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { intern, internedSize } from './intern.ts';

test('intern returns an equal string, and keeps one entry per distinct value', () => {
  const before = internedSize();
  const a = intern(JSON.parse('"https://network.example:9696/v2.0/intern-test"') as string);
  const b = intern(JSON.parse('"https://network.example:9696/v2.0/intern-test"') as string);
  assert.equal(a, 'https://network.example:9696/v2.0/intern-test');
  assert.equal(b, a);
  assert.equal(internedSize().strings, before.strings + 1);
  assert.equal(internedSize().chars, before.chars + a.length);
});

test('a string over 4,096 characters is returned as it is and not kept', () => {
  const before = internedSize();
  const long = 'x'.repeat(4097);
  assert.equal(intern(long), long);
  assert.deepEqual(internedSize(), before);
});

test('intern never changes a value, and the table stays within its bound', () => {
  fc.assert(fc.property(fc.string({ maxLength: 5000 }), (s) => assert.equal(intern(s), s)));
  assert.ok(internedSize().chars <= 1 << 20);
});
