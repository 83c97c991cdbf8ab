import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Sample } from './bench-stats.ts';
import { foreignKeyOf, formatSpread, renderSpreadTable, roundRatios, roundValues, spreadOf } from './round-spread.ts';

const samples: Sample[] = [
  { peer: 'nginx', round: 2, metrics: { p99: 0.4 } },
  { peer: 'kubeward', round: 1, metrics: { p99: 0.5 } },
  { peer: 'nginx', round: 1, metrics: { p99: 0.25 } },
  { peer: 'kubeward', round: 2, metrics: { p99: 0.44 } },
  { peer: 'kubeward', round: 3, metrics: { p99: 0.6 } },
];

test('per-round values in round order, ratios only for rounds with both peers', () => {
  assert.deepEqual(roundValues(samples, 'p99', 'kubeward'), [0.5, 0.44, 0.6]);
  assert.deepEqual(
    roundRatios(samples, 'p99', 'kubeward', 'nginx').map((r) => r.toFixed(2)),
    ['2.00', '1.10'],
  );
  assert.equal(spreadOf([]), undefined);
  assert.equal(formatSpread(spreadOf([0.5, 0.44, 0.6]), 2), '0.50 0.44 0.60 (0.44–0.60)');
});

test('the table has a row per metric measured, and leaves out a metric no peer has', () => {
  const t = renderSpreadTable(
    samples,
    [
      { key: 'p99', label: 'p99 (ms)', digits: 2 },
      { key: 'none', label: 'absent', digits: 0 },
    ],
    ['kubeward', 'nginx'],
    [['kubeward', 'nginx']],
  );
  assert.match(t, /\| p99 \(ms\) \| 0.50 0.44 0.60 \(0.44–0.60\) \| 0.25 0.40 \(0.25–0.40\) \| 2.00 1.10 \(1.10–2.00x\) \|/);
  assert.doesNotMatch(t, /absent/);
});

test("a value measured while other processes were busy is marked and left out of the range, and so is its round's ratio", () => {
  assert.equal(foreignKeyOf('pinned:kpP99Ms'), 'pinned:kpForeignPct');
  assert.equal(foreignKeyOf('shared:ol6000SvcP99Ms'), 'shared:ol6000ForeignPct');
  assert.equal(foreignKeyOf('shared:ol6000ForeignPct'), undefined);
  assert.equal(foreignKeyOf('kaP99Ms'), undefined);
  const s: Sample[] = [
    { peer: 'kubeward', round: 1, metrics: { 'pinned:kpP99Ms': 0.5, 'pinned:kpForeignPct': 0 } },
    { peer: 'kubeward', round: 2, metrics: { 'pinned:kpP99Ms': 3, 'pinned:kpForeignPct': 60 } },
    { peer: 'nginx', round: 1, metrics: { 'pinned:kpP99Ms': 0.25, 'pinned:kpForeignPct': 1 } },
    { peer: 'nginx', round: 2, metrics: { 'pinned:kpP99Ms': 0.3, 'pinned:kpForeignPct': 2 } },
  ];
  const t = renderSpreadTable(s, [{ key: 'pinned:kpP99Ms', label: 'p99', digits: 2 }], ['kubeward', 'nginx'], [['kubeward', 'nginx']], 10);
  assert.match(t, /\| p99 \| 0.50 3.00\* \(0.50–0.50\) \| 0.25 0.30 \(0.25–0.30\) \| 2.00 10.00\* \(2.00–2.00x\) \|/);
  assert.match(renderSpreadTable(s, [{ key: 'pinned:kpP99Ms', label: 'p99', digits: 2 }], ['kubeward'], [], 10), /0.50 3.00\* \(0.50–0.50\)/);
});
