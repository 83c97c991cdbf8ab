// The operator benchmark's arithmetic: cycle starts read from a request log, lateness, first-cycle
// times, percentiles, Prometheus text, apiserver counter deltas and memory slopes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  apiRequestDelta,
  cycleStarts,
  firstCycles,
  lateness,
  parsePrometheus,
  percentile,
  slopes,
  steadyValue,
  sumOf,
  type OsRequest,
  valueAt,
} from './operator-stats.ts';

const R = (atMs: number, path: string, method = 'GET'): OsRequest => ({ atMs, method, path });
const ROUTER = '/network/v2.0/routers/6f1c2e3a-0000-4000-8000-000000000001';
const GROUPS = '/network/v2.0/security-groups?name=c10-1-sg';
const SERVERS = '/compute/v2.1/servers/detail';

test("cycleStarts: a router read right after a group list is flight's; any other router read starts a routegc cycle", () => {
  const log = [
    R(0, ROUTER),
    R(5, SERVERS), // routegc cycle 1
    R(10, SERVERS),
    R(12, GROUPS),
    R(14, ROUTER), // flight round 1
    R(30_000, ROUTER),
    R(30_005, SERVERS), // routegc cycle 2
    R(31_000, SERVERS),
    R(31_002, GROUPS),
    R(31_004, '/network/v2.0/routers/x', 'PUT'),
    R(31_006, ROUTER), // flight round 2 (a PUT is no read)
    R(60_000, `${ROUTER}?fields=routes`), // a query on the router still reads it
  ];
  assert.deepEqual(cycleStarts(log), { routegc: [0, 30_000, 60_000], flight: [12, 31_002] });
  assert.deepEqual(cycleStarts([R(0, '/network/v2.0/routers'), R(1, '/network/v2.0/security-groups')]), { routegc: [], flight: [] }, 'lists are no markers');
});

test("cycleStarts: a first round where flight took routegc's router read leaves routegc's next cycle its own", () => {
  const log = [
    R(0, ROUTER), // routegc cycle 1 (flight takes this read)
    R(3, SERVERS), // flight's, taken by routegc
    R(12, GROUPS), // flight round 1: no router GET follows
    R(10_500, ROUTER), // routegc cycle 2, an interval later
    R(11_000, SERVERS),
    R(14_000, SERVERS),
    R(14_010, GROUPS),
    R(14_020, ROUTER), // flight round 2 reads on its own
  ];
  assert.deepEqual(cycleStarts(log), { routegc: [0, 10_500], flight: [12, 14_010] });
});

test('lateness: only what goes past 1.5 × interval counts', () => {
  assert.deepEqual(lateness([0, 30_000, 75_000, 125_000], 30_000), [0, 0, 5000]);
  assert.deepEqual(lateness([5], 30_000), []);
  assert.deepEqual(lateness([0, 30_000], 30_000, 60_000), [0], 'the next cycle is not due yet at the end');
  assert.deepEqual(lateness([0, 30_000], 30_000, 100_000), [0, 25_000], 'a cluster that stopped cycling is late by the overdue time');
});

test('percentile by nearest rank, finite values only', () => {
  assert.equal(percentile([], 50), undefined);
  assert.equal(percentile([3, 1, 2], 50), 2);
  assert.equal(percentile([1, 2, 3, 4], 50), 2);
  assert.equal(percentile([1, 2, 3, 4], 99), 4);
  assert.equal(percentile([7, Number.NaN], 0), 7);
  fc.assert(
    fc.property(fc.array(fc.double({ noNaN: true, min: -1e9, max: 1e9 }), { minLength: 1 }), fc.integer({ min: 0, max: 100 }), (xs, p) => {
      const v = percentile(xs, p)!;
      assert.ok(xs.includes(v), 'a percentile is one of the values');
      assert.ok(v <= percentile(xs, Math.min(100, p + 1))!, 'monotone in p');
    }),
  );
});

test('firstCycles: a cluster counts once both kinds ran; "all" only when every cluster did', () => {
  const a = { routegc: [1000, 31_000], flight: [1500] };
  const b = { routegc: [2000], flight: [4000] };
  const c = { routegc: [3000], flight: [] };
  assert.deepEqual(firstCycles([a, b], 0, ['routegc', 'flight']), { done: 2, allMs: 4000, p50Ms: 1500 });
  assert.deepEqual(firstCycles([a, b, c], 0, ['routegc', 'flight']), { done: 2, allMs: undefined, p50Ms: 1500 });
  assert.deepEqual(firstCycles([a, b, c], 500, ['routegc']), { done: 3, allMs: 2500, p50Ms: 1500 });
});

test('parsePrometheus reads labels (escaped quotes too) and skips comments; sumOf filters', () => {
  const text = [
    '# HELP x y',
    'kubeward_nodejs_heap_size_used_bytes 1234',
    'apiserver_request_total{code="200",resource="nodes",verb="LIST"} 5',
    'm{a="say \\"hi\\"",b="x"} 2.5',
    'garbage line',
  ].join('\n');
  const s = parsePrometheus(text);
  assert.equal(sumOf(s, 'kubeward_nodejs_heap_size_used_bytes'), 1234);
  assert.deepEqual(s.find((x) => x.name === 'm')!.labels, { a: 'say "hi"', b: 'x' });
  assert.equal(sumOf(s, 'apiserver_request_total', { verb: /^LIST$/ }), 5);
  assert.equal(sumOf(s, 'apiserver_request_total', { verb: 'GET' }), 0);
});

test('apiRequestDelta: the change per resource, watches and non-resource URLs left out, 409s on status counted', () => {
  const line = (labels: string, v: number) => `apiserver_request_total{${labels}} ${v}`;
  const before = parsePrometheus(
    [
      line('code="200",resource="managedclusters",subresource="status",verb="PUT"', 10),
      line('code="409",resource="managedclusters",subresource="status",verb="PUT"', 1),
      line('code="200",resource="nodes",subresource="",verb="LIST"', 7),
    ].join('\n'),
  );
  const after = parsePrometheus(
    [
      line('code="200",resource="managedclusters",subresource="status",verb="PUT"', 30),
      line('code="409",resource="managedclusters",subresource="status",verb="PUT"', 4),
      line('code="200",resource="nodes",subresource="",verb="LIST"', 17),
      line('code="200",resource="secrets",subresource="",verb="GET"', 6),
      line('code="200",resource="managedclusters",subresource="",verb="WATCH"', 2),
      line('code="200",resource="",subresource="",verb="GET"', 99),
    ].join('\n'),
  );
  assert.deepEqual(apiRequestDelta(before, after), {
    total: 20 + 3 + 10 + 6,
    byResource: { 'managedclusters/status PUT': 23, 'nodes LIST': 10, 'secrets GET': 6 },
    statusConflicts: 3,
  });
});

test('slopes between consecutive sizes, in size order; a missing value gives none', () => {
  assert.deepEqual(
    slopes([
      { n: 500, value: 300 },
      { n: 100, value: 100 },
      { n: 1000, value: 400 },
    ]),
    [undefined, 0.5, 0.2],
  );
  assert.deepEqual(
    slopes([
      { n: 10, value: undefined },
      { n: 100, value: 50 },
    ]),
    [undefined, undefined],
  );
});

test('steadyValue: the median of the last third of the run', () => {
  const xs = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => ({ atMs: i * 1000, value: i === 9 ? 100 : i * 10 }));
  assert.equal(steadyValue(xs), 70, 'samples at 6..9 s: 60, 70, 80, 100');
  assert.equal(steadyValue([]), undefined);
});

test('valueAt: a cumulative series read between its samples, nothing outside them', () => {
  const cpu = [
    { atMs: 1000, value: 0 },
    { atMs: 1500, value: 0.4 },
    { atMs: 2000, value: 0.5 },
  ];
  assert.equal(valueAt(cpu, 1000), 0);
  assert.equal(valueAt(cpu, 1250), 0.2);
  assert.equal(valueAt(cpu, 1750), 0.45);
  assert.equal(valueAt(cpu, 2000), 0.5);
  assert.equal(valueAt(cpu, 999), undefined);
  assert.equal(valueAt(cpu, 2001), undefined);
  assert.equal(valueAt([], 1000), undefined);
});
