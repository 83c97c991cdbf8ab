import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inst, node } from './cluster-fixtures.test-helpers.ts';
import { OWNER_METADATA_KEY, OWNER_REF_METADATA_KEY, matchesPoolPrefix, poolNameProblem, proveOwnership } from './cluster-identity.ts';
import { kubernikusClaim, parseOwnerMetadata } from './provisioner-claims.ts';

const ID = { ownerId: 'uid-k1', poolPrefixes: ['kks-k1-small-'] };

test("a pool prefix matches only its own five-character suffix: kks-k1-small- is not cluster k1-small's", () => {
  assert.ok(matchesPoolPrefix('kks-k1-small-b2xq9', 'kks-k1-small-'));
  for (const name of ['kks-k1-small-x-b2xq9', 'kks-k1-small-b2xq9z', 'kks-k1-small-b2xq', 'kks-k1-small-B2XQ9', 'kks-k1-smallb2xq9', 'kks-k1-small-']) {
    assert.ok(!matchesPoolPrefix(name, 'kks-k1-small-'), name);
  }
  assert.ok(!matchesPoolPrefix('kks-k1-b2xq9', 'kks-k1'), 'a prefix without the delimiter matches nothing');
  assert.ok(!matchesPoolPrefix('x-b2xq9', '-'));
  assert.equal(poolNameProblem('small'), undefined);
  assert.match(poolNameProblem('small-x') ?? '', /collide/);
});

test("a person's -debug or -test1 server of the pool grammar is a candidate (protected), never proven", () => {
  const servers = [inst('debug', [], { name: 'kks-k1-small-debug' }), inst('test1', [], { name: 'kks-k1-small-test1' })];
  const o = proveOwnership(servers, [], { ...ID, provisionerClaims: [kubernikusClaim('k1')] });
  assert.deepEqual([...o.proven], []);
  assert.deepEqual(
    o.candidates.map((c) => c.id),
    ['debug', 'test1'],
  );
});

test("a name of the pool grammar is a candidate (protected) but proves nothing; the provisioner's metadata for this cluster does", () => {
  const kks = { provisioner: 'kubernikus', 'kubernikus:kluster': 'k1' };
  const servers = [
    inst('named', [], { name: 'kks-k1-small-b2xq9' }),
    inst('kubernikus', [], { name: 'kks-k1-small-c4zz7', metadata: kks }),
    inst('other-cluster', [], { name: 'kks-k1-small-d5ww8', metadata: { ...kks, 'kubernikus:kluster': 'k2' } }),
  ];
  const o = proveOwnership(servers, [], { ...ID, provisionerClaims: [kubernikusClaim('k1')] });
  assert.deepEqual([...o.proven], [['kubernikus', 'provisioner-metadata']]);
  assert.deepEqual(
    o.candidates.map((c) => c.id),
    ['named', 'kubernikus', 'other-cluster'],
  );
});

test('a claim by name proves nothing while a namesake ManagedCluster exists, not even with our earlier stamp; a providerID still does', () => {
  const kks = { provisioner: 'kubernikus', 'kubernikus:kluster': 'k1' };
  const servers = [
    inst('a', [], { name: 'kks-k1-small-b2xq9', metadata: kks }),
    inst('b', [], { name: 'kks-k1-small-c4zz7', metadata: { ...kks, [OWNER_METADATA_KEY]: 'uid-k1' } }),
    inst('c', [], { name: 'kks-k1-small-d5ww8', metadata: kks }),
  ];
  const o = proveOwnership(servers, [node('n-c', [], [], 'c')], { ...ID, provisionerClaims: [kubernikusClaim('k1')], namesakes: ['ns-b/k1'] });
  assert.deepEqual([...o.proven], [['c', 'provider-id']]);
  assert.deepEqual(o.conflicts.map((c) => c.instanceId).sort(), ['a', 'b']);
  assert.match(o.conflicts[0]!.why, /ns-b\/k1/);
});

test('a restore: stamps of the earlier UID with our ref are a previous owner, not proof, until adopted; another ref is never adopted', () => {
  const servers = [
    inst('old', [], { name: 'w1', metadata: { [OWNER_METADATA_KEY]: 'uid-old', [OWNER_REF_METADATA_KEY]: 'ns-a/k1' } }),
    inst('legacy', [], { name: 'w2', metadata: { [OWNER_METADATA_KEY]: 'uid-old' } }),
    inst('theirs', [], { name: 'w3', metadata: { [OWNER_METADATA_KEY]: 'uid-old', [OWNER_REF_METADATA_KEY]: 'ns-b/k1' } }),
  ];
  const nodes = [node('w1', [], [], 'old'), node('w2', [], [], 'legacy')];
  const id = { ...ID, ownerRef: 'ns-a/k1' };
  const before = proveOwnership(servers, nodes, id);
  assert.deepEqual([...before.proven], []);
  assert.deepEqual([...before.previousOwners], [['uid-old', ['old', 'legacy']]]);
  const after = proveOwnership(servers, nodes, { ...id, adoptOwners: ['uid-old'] });
  assert.deepEqual([...after.proven].sort(), [
    ['legacy', 'provider-id'],
    ['old', 'provider-id'],
  ]);
  assert.ok(!after.proven.has('theirs'), "another cluster's stamp is not adopted");
});

test('owner metadata given by hand: key=value items, all required; a value that is only the name is name-keyed; bad items are refused', () => {
  assert.deepEqual(parseOwnerMetadata(['openshiftClusterID=k1-x7q2p'], 'k1').claim, {
    provisioner: 'owner metadata',
    metadata: { openshiftClusterID: 'k1-x7q2p' },
    byName: false,
  });
  assert.equal(parseOwnerMetadata(['cluster=k1'], 'k1').claim?.byName, true);
  for (const bad of ['=x', 'k=', 'noequals', 'kubeward:owner=x', 'a b=c']) assert.ok(parseOwnerMetadata([bad], 'k1').problem, bad);
  assert.deepEqual(parseOwnerMetadata([''], 'k1'), {});
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

test('harm 2: two servers with one name are reported and neither is proven, whatever proves them', () => {
  const servers = [inst('a', [], { name: 'kks-k1-small-b2xq9' }), inst('b', [], { name: 'kks-k1-small-b2xq9' }), inst('c', [], { name: 'kks-k1-small-c4zz7' })];
  const o = proveOwnership(servers, [node('kks-k1-small-b2xq9', [], [], 'a'), node('kks-k1-small-c4zz7', [], [], 'c')], ID);
  assert.deepEqual(o.duplicateNames, ['kks-k1-small-b2xq9']);
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
