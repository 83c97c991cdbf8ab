import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inst, node } from './cluster-fixtures.test-helpers.ts';
import { OWNER_METADATA_KEY, matchesPoolPrefix, poolNameProblem, proveOwnership } from './cluster-identity.ts';

const ID = { ownerId: 'uid-k1', poolPrefixes: ['kks-k1-small-'] };

test('a pool prefix matches only its own five-character suffix: kks-k1-small- is not cluster k1-small', () => {
  assert.ok(matchesPoolPrefix('kks-k1-small-abcde', 'kks-k1-small-'));
  for (const name of ['kks-k1-small-x-abcde', 'kks-k1-small-abcdef', 'kks-k1-small-abcd', 'kks-k1-small-ABCDE', 'kks-k1-smallabcde', 'kks-k1-small-']) {
    assert.ok(!matchesPoolPrefix(name, 'kks-k1-small-'), name);
  }
  assert.ok(!matchesPoolPrefix('kks-k1-abcde', 'kks-k1'), 'a prefix without the delimiter proves nothing');
  assert.ok(!matchesPoolPrefix('x-abcde', '-'));
  assert.equal(poolNameProblem('small'), undefined);
  assert.match(poolNameProblem('small-x') ?? '', /collide/);
});

test('harm 2: a foreign server named like one of our Nodes is a candidate (protected) but never proven', () => {
  const servers = [inst('foreign', ['10.0.0.9'], { name: 'worker-1' }), inst('ours', ['10.0.0.1'], { name: 'worker-2' })];
  const o = proveOwnership(servers, [node('worker-1', []), node('worker-2', [], [], 'ours')], ID);
  assert.deepEqual(
    o.candidates.map((c) => c.id),
    ['foreign', 'ours'],
  );
  assert.deepEqual([...o.proven], [['ours', 'provider-id']]);
});

test('harm 2: two servers with one name are reported and neither is proven, whatever their names prove', () => {
  const servers = [inst('a', [], { name: 'kks-k1-small-abcde' }), inst('b', [], { name: 'kks-k1-small-abcde' }), inst('c', [], { name: 'kks-k1-small-fghij' })];
  const o = proveOwnership(servers, [node('kks-k1-small-abcde', [])], ID);
  assert.deepEqual(o.duplicateNames, ['kks-k1-small-abcde']);
  assert.deepEqual([...o.proven.keys()], ['c']);
});

test("owner metadata proves a server; another owner's metadata disproves every other proof; UNKNOWN servers prove nothing", () => {
  const servers = [
    inst('meta', [], { name: 'renamed', metadata: { [OWNER_METADATA_KEY]: 'uid-k1' } }),
    inst('theirs', [], { name: 'kks-k1-small-zzzzz', metadata: { [OWNER_METADATA_KEY]: 'uid-other' } }),
    inst('down', [], { name: '', status: 'UNKNOWN' }),
  ];
  const o = proveOwnership(servers, [node('n', [], [], 'down')], ID);
  assert.deepEqual([...o.proven], [['meta', 'owner-metadata']]);
  assert.deepEqual(o.foreignOwned, ['theirs']);
  assert.ok(
    o.candidates.some((c) => c.id === 'down'),
    'a down-cell server a Node names stays a candidate',
  );
});
