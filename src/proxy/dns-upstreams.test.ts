import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatHostPort, type HostPort } from '../config/fields.ts';
import { joinAnswers, planResolved } from './dns-upstreams.ts';

const hp = (host: string, port = 6443): HostPort => ({ host, port });
const keys = (l: readonly HostPort[]) => l.map(formatHostPort).sort();

test('a failed or empty resolution keeps the last good set whole', () => {
  const prev = [hp('10.0.0.1'), hp('10.0.0.2')];
  assert.deepEqual(keys(planResolved(prev, undefined, () => true)), keys(prev));
  assert.deepEqual(keys(planResolved(prev, [], () => false)), keys(prev));
});

test('an address that left the answer stays while up until every new one has passed its checks', () => {
  const prev = [hp('10.0.0.1'), hp('10.0.0.2'), hp('10.0.0.3')];
  const next = [hp('10.0.0.9'), hp('10.0.0.2'), hp('10.0.0.3')];
  const up = new Set(['10.0.0.1:6443', '10.0.0.2:6443', '10.0.0.3:6443']);
  assert.deepEqual(keys(planResolved(prev, next, (k) => up.has(k))), ['10.0.0.1:6443', '10.0.0.2:6443', '10.0.0.3:6443', '10.0.0.9:6443']);
  up.add('10.0.0.9:6443');
  assert.deepEqual(keys(planResolved(prev, next, (k) => up.has(k))), keys(next), 'replacement proven: the old one goes');
  up.delete('10.0.0.9:6443');
  up.delete('10.0.0.1:6443');
  assert.deepEqual(keys(planResolved(prev, next, (k) => up.has(k))), keys(next), 'a departed address that is down is not kept');
});

test('property: the plan always holds every resolved address, never an address that is down and gone, and never shrinks to nothing', () => {
  const addr = fc.integer({ min: 1, max: 12 }).map((n) => hp(`10.0.0.${n}`));
  fc.assert(
    fc.property(
      fc.uniqueArray(addr, { selector: formatHostPort, maxLength: 6 }),
      fc.option(fc.uniqueArray(addr, { selector: formatHostPort, maxLength: 6 })),
      fc.func(fc.boolean()),
      (prev, next, upFn) => {
        const isUp = (k: string) => upFn(k);
        const plan = planResolved(prev, next ?? undefined, isUp);
        const planKeys = new Set(plan.map(formatHostPort));
        if (next && next.length) {
          for (const u of next) assert.ok(planKeys.has(formatHostPort(u)));
          const wanted = new Set(next.map(formatHostPort));
          for (const k of planKeys) if (!wanted.has(k)) assert.ok(isUp(k), `${k} kept while down`);
        } else {
          assert.deepEqual([...planKeys].sort(), keys(prev));
        }
        if (prev.length || (next && next.length)) assert.ok(plan.length > 0);
      },
    ),
  );
});

test('answers join per name; a failed name keeps its previous addresses; duplicates count once', () => {
  const names = [
    { name: 'api.a', port: 6443 },
    { name: 'api.b', port: 6443 },
  ];
  const prev = new Map([['api.b:6443', [hp('10.0.0.7')]]]);
  const { list, byName } = joinAnswers(names, [['10.0.0.1', '10.0.0.2'], undefined], prev);
  assert.deepEqual(keys(list), ['10.0.0.1:6443', '10.0.0.2:6443', '10.0.0.7:6443']);
  assert.deepEqual(byName.get('api.b:6443'), [hp('10.0.0.7')]);
  const dup = joinAnswers(names, [['10.0.0.1'], ['10.0.0.1']], new Map());
  assert.equal(dup.list.length, 1);
});
