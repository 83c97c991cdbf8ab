import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parsePeerSpec, runRatioRange, seededRandom, selfRatioRange, summarize, type Load } from './paced-compare-stats.ts';

test('peer specs: the four peers, nginx with :reuseport, kubeward with another build', () => {
  assert.deepEqual(parsePeerSpec('kubeward-2'), { label: 'kubeward-2', kind: 'kubeward-2', reuseport: false });
  assert.deepEqual(parsePeerSpec('nginx-2:reuseport'), { label: 'nginx-2:reuseport', kind: 'nginx-2', reuseport: true });
  assert.deepEqual(parsePeerSpec('kubeward-2@/tmp/wt/bin/kubeward.js'), {
    label: 'kubeward-2@/tmp/wt/bin/kubeward.js',
    kind: 'kubeward-2',
    reuseport: false,
    main: '/tmp/wt/bin/kubeward.js',
  });
  for (const bad of ['haproxy', 'kubeward:reuseport', 'nginx@/x/bin/kubeward.js', 'kubeward@relative/bin/kubeward.js', 'kubeward@/x/y.js', 'nginx-3', ''])
    assert.throws(() => parsePeerSpec(bad), /--peer .*expected kubeward, kubeward-2, nginx or nginx-2/, bad);
});

test('peer specs: any other text is refused with the grammar, never half-parsed', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), (s) => {
      let peer;
      try {
        peer = parsePeerSpec(s);
      } catch (err) {
        assert.match((err as Error).message, /expected kubeward/);
        return;
      }
      assert.equal(peer.label, s);
      assert.ok(['kubeward', 'kubeward-2', 'nginx', 'nginx-2'].includes(peer.kind));
    }),
  );
});

test('a peer against itself: the spread of one run ratio grows with the spread of its loads', () => {
  const steady = Array.from({ length: 18 }, (_, i) => 0.6 + (i % 3) * 0.01);
  const noisy = Array.from({ length: 18 }, (_, i) => 0.45 + (i % 6) * 0.1);
  const a = selfRatioRange(steady, 3, 1.2, 5000, seededRandom(7))!;
  const b = selfRatioRange(noisy, 3, 1.2, 5000, seededRandom(7))!;
  assert.equal(a.passPct, 100, 'loads within 4 % of each other never give a 1.2x ratio');
  assert.ok(a.p5 >= 0.96 && a.p95 <= 1.04, JSON.stringify(a));
  assert.ok(b.passPct < 95 && b.passPct > 50 && b.p95 > 1.2 && b.p5 < 1 / 1.2, JSON.stringify(b));
  assert.equal(selfRatioRange(steady.slice(0, 5), 3, 1.2, 10, seededRandom(1)), undefined, 'fewer than two runs of loads');
});

test('one run against another peer: passes always when far below, never when far above, sometimes at the edge', () => {
  const ref = [0.5, 0.55, 0.6, 0.65, 0.7, 0.6];
  const rng = seededRandom(11);
  assert.equal(
    runRatioRange(
      ref.map((x) => x * 0.5),
      ref,
      3,
      1.2,
      2000,
      rng,
    )!.passPct,
    100,
  );
  assert.equal(
    runRatioRange(
      ref.map((x) => x * 2),
      ref,
      3,
      1.2,
      2000,
      rng,
    )!.passPct,
    0,
  );
  const edge = runRatioRange(
    ref.map((x) => x * 1.2),
    ref,
    3,
    1.2,
    2000,
    rng,
  )!;
  assert.ok(edge.passPct > 20 && edge.passPct < 80 && edge.p5 < 1.2 && edge.p95 > 1.2, JSON.stringify(edge));
  assert.equal(runRatioRange([0.5, 0.6], ref, 3, 1.2, 10, rng), undefined, 'fewer loads than a run');
});

test('the resampling repeats for the same seed', () => {
  const xs = [0.5, 0.7, 0.61, 0.9, 0.55, 0.66, 0.8, 0.52];
  assert.deepEqual(selfRatioRange(xs, 3, 1.2, 1000, seededRandom(3)), selfRatioRange(xs, 3, 1.2, 1000, seededRandom(3)));
});

test('summaries: medians per peer in the order named, ratios against the first', () => {
  const loads: Load[] = [
    { label: 'nginx-2', p50Ms: 0.2, p99Ms: 0.5, cpuUsPerRequest: 30 },
    { label: 'nginx-2', p50Ms: 0.2, p99Ms: 0.6, cpuUsPerRequest: 28 },
    { label: 'nginx-2', p50Ms: 0.1, p99Ms: 0.7, cpuUsPerRequest: 29 },
    { label: 'kubeward-2', p50Ms: 0.2, p99Ms: 0.9, cpuUsPerRequest: 31 },
    { label: 'kubeward-2', p50Ms: 0.3, p99Ms: 0.6 },
    { label: 'kubeward-2', p50Ms: 0.2, p99Ms: 0.72 },
  ];
  const [ng, kw, none] = summarize(['nginx-2', 'kubeward-2', 'nginx'], loads, 'nginx-2', { runLoads: 3, limit: 1.2, draws: 10, rng: seededRandom(1) });
  assert.deepEqual([ng!.label, ng!.loads, ng!.p99Ms, ng!.p99Ratio, ng!.cpuUsPerRequest], ['nginx-2', 3, 0.6, 1, 29]);
  assert.equal(kw!.p99Ms, 0.72);
  assert.ok(Math.abs(kw!.p99Ratio! - 1.2) < 1e-9);
  assert.equal(kw!.cpuUsPerRequest, 31, 'the loads without a CPU figure are left out of its median');
  assert.equal(kw!.selfRatio, undefined, 'three loads are not two runs');
  assert.equal(ng!.vsReference, undefined, 'the reference is not compared with itself');
  assert.ok(kw!.vsReference !== undefined);
  assert.equal(none!.loads, 0);
  assert.equal(none!.p99Ratio, undefined);
});
