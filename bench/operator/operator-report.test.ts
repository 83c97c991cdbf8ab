// The operator benchmark's table and target checks: sizes in order, memory per cluster from the
// slope, targets that need a size not run are "not measured" rather than passed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkTargets, perCluster, renderTable, renderTargets, type SizeResult } from './operator-report.ts';

const result = (n: number, over: Partial<SizeResult> = {}): SizeResult => ({
  n,
  durationS: 150,
  rssMiB: 200 + n * 0.5,
  heapUsedMiB: 50 + n * 0.1,
  firstCycleDone: n,
  firstCycleAllS: n / 100,
  cycles: { routegc: 3 * n, flight: 3 * n },
  latenessP50S: 0,
  latenessP99S: 0,
  statusWrites: 100,
  statusConflicts: 0,
  kubeByResource: {},
  osByKind: {},
  ...over,
});

test('perCluster: KiB per cluster between consecutive sizes, none for the smallest', () => {
  const per = perCluster([result(500), result(100)]);
  assert.deepEqual(per.get(100), { rssKiB: undefined, heapKiB: undefined });
  assert.equal(per.get(500)!.rssKiB, 512);
  assert.ok(Math.abs(per.get(500)!.heapKiB! - 102.4) < 1e-9);
});

test('renderTable: one column per size in order, dashes for what was not measured', () => {
  const text = renderTable([result(100), result(10, { cpuSPerMin: 1.25, eventLoopMaxMs: undefined })]);
  const lines = text.trim().split('\n');
  assert.equal(lines[0], '| | N=10 | N=100 |');
  assert.equal(lines[1], '|---|---:|---:|');
  assert.ok(lines.includes('| CPU, s per minute (whole run) | 1.3 | — |'), text);
  assert.ok(lines.includes('| event-loop delay, largest, start-up included (ms) | — | — |'), text);
  assert.ok(lines.includes('| RSS per cluster, slope from the size before (KiB) | — | 512 |'), text);
  assert.ok(lines.includes('| cycles seen (routegc + flight) | 60 | 600 |'), text);
});

test('checkTargets: the first-cycle target is not measured without N=1,000, and each failing target is named', () => {
  const small = checkTargets([result(10), result(100)]);
  assert.equal(small[0]!.holds, undefined);
  assert.match(small[0]!.measured, /not run at N = 1,000; N=10: 0.1 s, N=100: 1.0 s/);
  assert.equal(small[1]!.holds, false, '0.5 MiB per cluster is over 100 KiB');
  assert.equal(small[2]!.holds, true);
  assert.equal(small[3]!.holds, true);

  const big = checkTargets([result(500, { rssMiB: 300 }), result(1000, { firstCycleAllS: 12, rssMiB: 340, statusConflicts: 5, latenessP99S: 3 })]);
  assert.deepEqual(
    big.map((c) => c.holds),
    [false, true, false, false],
  );
  assert.match(big[1]!.measured, /^82 KiB per cluster \(N=500 to 1000\)/);
  const close = checkTargets([result(5, { rssMiB: 210 }), result(10, { rssMiB: 200 })]);
  assert.equal(close[1]!.holds, undefined, 'sizes 5 clusters apart give no memory verdict (a negative slope is noise)');
  assert.match(big[2]!.measured, /N=1000: 5 of 100/);

  const notDone = checkTargets([result(1000, { firstCycleAllS: undefined })]);
  assert.equal(notDone[0]!.holds, false, 'clusters that never had a first cycle fail the target');
  assert.equal(notDone[1]!.holds, undefined, 'one size gives no slope');
  assert.match(renderTargets(notDone), /\| not measured \| needs two sizes at least 90 clusters apart \|/);
});

test("renderTable: the start's CPU per process, the operator's share of a core, and dashes where a process was not read", () => {
  const text = renderTable([
    result(1000, { firstCycleAllS: 12.5, startCpuS: { operator: 10, kubeApiserver: 6, etcd: 1.5, emulator: 2 } }),
    result(100, { firstCycleAllS: 2, startCpuS: { operator: 1.5, kubeApiserver: undefined, etcd: 0.2, emulator: 0.3 } }),
  ]);
  const lines = text.trim().split('\n');
  assert.ok(lines.includes('| operator CPU until every first cycle (s) | 1.5 | 10.0 |'), text);
  assert.ok(lines.includes('| operator share of a core until then | 0.75 | 0.80 |'), text);
  assert.ok(lines.includes('| kube-apiserver + etcd CPU until then (s) | — | 7.5 |'), text);
  assert.ok(lines.includes('| emulator (the bench process) CPU until then (s) | 0.3 | 2.0 |'), text);
});
