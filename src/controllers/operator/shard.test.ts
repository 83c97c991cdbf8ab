// The shard function (fast-check): every cluster in exactly one shard for any N, the same answer
// every time and in every process (pinned values: changing the hash would move every cluster on
// upgrade), balanced within bounds, minimal movement when N changes, the label override, and the
// --shard grammar.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Refused } from '../../config/fields.ts';
import { createSilentLogger } from '../../base/logger.ts';
import {
  MAX_SHARDS,
  SHARD_LABEL,
  hashShard,
  memoizedHashShard,
  parseShard,
  placeCluster,
  shardDecision,
  shardLeaseName,
  summarizeShard,
  type ClusterMeta,
} from './shard.ts';
import { shardGate } from './shard-gate.ts';

const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/);
const cluster = fc.record({ namespace: dnsLabel, name: dnsLabel });
const count = fc.integer({ min: 1, max: MAX_SHARDS });
const labelValue = fc.oneof(fc.nat({ max: 80 }).map(String), fc.constantFrom('', '-1', '01', '1/2', 'x', ' 1', '9999'));

test('every cluster is owned by exactly one shard for any N (hash or valid label), by none for a bad label', () => {
  fc.assert(
    fc.property(cluster, count, fc.option(labelValue, { nil: undefined }), (c, n, label) => {
      const meta: ClusterMeta = { ...c, labels: label === undefined ? undefined : { [SHARD_LABEL]: label, other: 'x' } };
      const owners = Array.from({ length: n }, (_, index) => index).filter((index) => shardDecision({ index, count: n }, meta).owned);
      const p = placeCluster(meta, n);
      if (p.owner === undefined) {
        assert.deepEqual(owners, [], 'a label naming no shard: nobody acts');
        const reporters = Array.from({ length: n }, (_, index) => shardDecision({ index, count: n }, meta)).filter((d) => !d.owned && d.report);
        assert.equal(reporters.length, 1, 'exactly one shard reports it');
      } else {
        assert.deepEqual(owners, [p.owner]);
        assert.ok(p.owner >= 0 && p.owner < n);
        if (label === undefined) assert.equal(p.by, 'hash');
        else assert.equal(p.owner, Number(label), 'a valid label wins over the hash');
      }
    }),
    { numRuns: 500 },
  );
});

test('the shard is stable: the same every call, and pinned for known clusters (a new hash would move every cluster)', () => {
  fc.assert(fc.property(cluster, count, (c, n) => hashShard(c.namespace, c.name, n) === hashShard(c.namespace, c.name, n)));
  // Computed once with this file's hash (SHA-256 rendezvous); these must never change.
  const pinned = [
    ['tenant-a', 'k1', 3],
    ['tenant-a', 'k2', 3],
    ['tenant-b', 'k1', 3],
    ['opshard-1', 'shard-7', 2],
    ['x', 'y', 64],
  ] as const;
  assert.deepEqual(
    pinned.map(([ns, name, n]) => hashShard(ns, name, n)),
    PINNED,
  );
  assert.equal(hashShard('tenant-a', 'k1', 1), 0);
});
const PINNED = [1, 1, 1, 0, 24];

test('the memoized hash answers as hashShard does, the second ask of a cluster included', () => {
  const memo = memoizedHashShard();
  fc.assert(
    fc.property(fc.option(fc.string(), { nil: undefined }), fc.string({ minLength: 1 }), fc.integer({ min: 1, max: MAX_SHARDS }), (ns, name, count) => {
      const direct = hashShard(ns, name, count);
      assert.equal(memo(ns, name, count), direct);
      assert.equal(memo(ns, name, count), direct);
    }),
    { numRuns: 200 },
  );
});

test('balanced: with many clusters every shard gets its share within 6 standard deviations', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(cluster, { minLength: 1500, maxLength: 2000, selector: (c) => `${c.namespace}/${c.name}` }),
      fc.integer({ min: 2, max: 16 }),
      (cs, n) => {
        const per = new Array<number>(n).fill(0);
        for (const c of cs) per[hashShard(c.namespace, c.name, n)]!++;
        const mean = cs.length / n;
        const sd = Math.sqrt(cs.length * (1 / n) * (1 - 1 / n));
        for (const k of per) assert.ok(Math.abs(k - mean) <= 6 * sd, `shard sizes ${per.join(',')} for ${cs.length} clusters in ${n} shards`);
      },
    ),
    { numRuns: 15 },
  );
});

test('resizing moves only what it must: N → N+1 moves clusters only to the new shard', () => {
  fc.assert(
    fc.property(cluster, fc.integer({ min: 1, max: MAX_SHARDS - 1 }), (c, n) => {
      const before = hashShard(c.namespace, c.name, n);
      const after = hashShard(c.namespace, c.name, n + 1);
      assert.ok(after === before || after === n, `${before} of ${n} went to ${after} of ${n + 1}`);
    }),
    { numRuns: 500 },
  );
});

test('--shard grammar: index/count with 0 ≤ index < count ≤ 64; everything else refused with the fix', () => {
  assert.deepEqual(parseShard('1/3'), { index: 1, count: 3 });
  assert.deepEqual(parseShard('0/1'), { index: 0, count: 1 });
  const problem = (t: string) => (parseShard(t) as Refused).problem;
  assert.match(problem('3/3'), /must be below 3 \(0 to 2\); e\.g\. 2\/3/);
  assert.match(problem('0/0'), /between 1 and 64/);
  assert.match(problem('1/65'), /between 1 and 64/);
  assert.match(problem('one'), /write it as <index>\/<count>/);
  fc.assert(
    fc.property(fc.string({ maxLength: 12 }), (t) => {
      const r = parseShard(t);
      if (r instanceof Refused) {
        assert.ok(!r.problem.includes('\n'), 'one line');
        return;
      }
      assert.match(t.trim(), /^\d+\/\d+$/);
      assert.ok(r.index >= 0 && r.index < r.count && r.count <= MAX_SHARDS);
    }),
    { numRuns: 1000 },
  );
  fc.assert(
    fc.property(fc.integer({ min: 1, max: MAX_SHARDS }), fc.nat(), (n, i) => {
      const r = parseShard(`${i % n}/${n}`);
      assert.deepEqual(r, { index: i % n, count: n });
    }),
  );
});

test('each shard has its own Lease name', () => {
  assert.equal(shardLeaseName('kubeward-operator', { index: 1, count: 3 }), 'kubeward-operator-shard-1-of-3');
});

test('summary and gate: owned, pinned, skipped and refused clusters counted and decided alike', () => {
  const cs: ClusterMeta[] = [
    { namespace: 'a', name: 'k1' },
    { namespace: 'a', name: 'k2' },
    { namespace: 'b', name: 'k3', labels: { [SHARD_LABEL]: '1' } },
    { namespace: 'b', name: 'k4', labels: { [SHARD_LABEL]: '7' } },
  ];
  const s0 = summarizeShard({ index: 0, count: 2 }, cs);
  const s1 = summarizeShard({ index: 1, count: 2 }, cs);
  assert.equal(s0.owned + s1.owned, 3, 'the bad label is owned by nobody');
  assert.equal(s1.pinnedHere, 1);
  assert.equal(s0.skipped + s1.skipped, 5);
  assert.deepEqual([...s0.refused, ...s1.refused], ['b/k4']);
  const gate = shardGate({ index: 1, count: 2 }, createSilentLogger());
  assert.deepEqual(
    cs.map((c) => gate.owns(c)),
    cs.map((c) => shardDecision({ index: 1, count: 2 }, c).owned),
  );
});
