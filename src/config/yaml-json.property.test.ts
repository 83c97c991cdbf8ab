// The config file's parse crosses a pipe as JSON (yaml-process.ts): every value YAML's core schema
// can give must come back as it was, numbers JSON has no spelling for and keys that look like the tag included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeYamlValue, encodeYamlValue } from './yaml-json.ts';

const PREFIX = '\u0000kubeward:';
const key = fc.oneof(
  fc.string(),
  fc.constantFrom('__proto__', 'constructor', `${PREFIX}number`, PREFIX, `${PREFIX}${PREFIX}number`, ''),
  fc.string().map((s) => PREFIX + s),
);
const scalar = fc.oneof(
  fc.string(),
  fc.double(), // NaN, ±Infinity and -0 included
  fc.constantFrom(Infinity, -Infinity, NaN, -0, 0),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('value'), { maxLength: 4 }), tie('object')),
  object: fc.array(fc.tuple(key, tie('value')), { maxLength: 4 }).map((pairs) => {
    const o: Record<string, unknown> = {};
    for (const [k, v] of pairs) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
    return o;
  }),
}));

/** Deep equality that tells -0 from 0 and NaN from null, and sees "__proto__" as an own key. */
function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' || typeof b === 'number') return Object.is(a, b);
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (a !== null && typeof a === 'object') {
    if (b === null || typeof b !== 'object' || Array.isArray(b)) return false;
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
}

test('any parsed value survives the trip through JSON: non-finite numbers, -0, __proto__ and tag-like keys included', () => {
  fc.assert(
    fc.property(value, (v) => {
      const back = decodeYamlValue(JSON.parse(JSON.stringify(encodeYamlValue(v))));
      assert.ok(same(back, v), `${String(JSON.stringify(encodeYamlValue(v)))}`);
    }),
    { numRuns: 3000 },
  );
});

test('a file key equal to the tag is a key, not a number', () => {
  const v = { [`${PREFIX}number`]: 'Infinity' };
  assert.deepEqual(decodeYamlValue(JSON.parse(JSON.stringify(encodeYamlValue(v)))), v);
  assert.ok(Object.is(decodeYamlValue(JSON.parse(JSON.stringify(encodeYamlValue(-0)))), -0));
});
