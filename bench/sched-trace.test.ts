import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { analyzeTrace, parseTraceLine, quantile, spread, type TraceEvent } from './sched-trace.ts';

// Lines as `perf script --ns -F comm,tid,pid,cpu,time,event,trace` prints them (perf 6.x).
const LINES = {
  switch:
    '            wrk 30001/30000 [001] 45257.100000000:     sched:sched_switch: prev_comm=wrk prev_pid=30001 prev_prio=120 prev_state=S ==> next_comm=V8 DefaultWorke next_pid=40002 next_prio=120',
  wakeup: '  V8 DefaultWorke 40002/40000 [000] 45257.100010500:     sched:sched_wakeup: comm=nginx pid=50000 prio=120 target_cpu=001',
  enter: '            node 40000/40000 [000] 45257.100020000: raw_syscalls:sys_enter: NR 1 (17, 7f0, 4e, 0, 0, 0)',
  exit: '            node 40000/40000 [000] 45257.100030000:  raw_syscalls:sys_exit: NR 1 = 78',
};

test('parseTraceLine reads the four events, names with spaces included', () => {
  assert.deepEqual(parseTraceLine(LINES.switch), {
    kind: 'switch',
    ns: 45257100000000,
    cpu: 1,
    tid: 30001,
    prevTid: 30001,
    prevState: 'S',
    nextTid: 40002,
  });
  assert.deepEqual(parseTraceLine(LINES.wakeup), { kind: 'wakeup', ns: 45257100010500, cpu: 0, tid: 40002, wakee: 50000, targetCpu: 1 });
  assert.deepEqual(parseTraceLine(LINES.enter), { kind: 'enter', ns: 45257100020000, cpu: 0, tid: 40000, nr: 1 });
  assert.deepEqual(parseTraceLine(LINES.exit), { kind: 'exit', ns: 45257100030000, cpu: 0, tid: 40000, nr: 1 });
  assert.equal(parseTraceLine('            node 40000/40000 [000] 45257.100030000:  sched:sched_migrate_task: comm=node pid=1'), undefined);
  assert.equal(parseTraceLine(''), undefined);
});

test('parseTraceLine never throws, whatever the line', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 300 }), (line) => {
      const ev = parseTraceLine(line);
      assert.ok(ev === undefined || ['switch', 'wakeup', 'enter', 'exit'].includes(ev.kind));
    }),
  );
});

const P = 100; // the proxy thread
const B = 200; // the backend it writes to
const W = 300; // wrk, which wakes the proxy
const sw = (ns: number, cpu: number, prevTid: number, prevState: string, nextTid: number): TraceEvent => ({
  kind: 'switch',
  ns,
  cpu,
  tid: prevTid,
  prevTid,
  prevState,
  nextTid,
});
const wake = (ns: number, cpu: number, tid: number, wakee: number, targetCpu: number): TraceEvent => ({ kind: 'wakeup', ns, cpu, tid, wakee, targetCpu });
const enter = (ns: number, tid: number, nr: number): TraceEvent => ({ kind: 'enter', ns, cpu: 0, tid, nr });

test('a leg: wake-up delay, time to the first write, after it, the wakee on the same CPU waiting for the proxy to sleep', () => {
  const a = analyzeTrace(
    [
      wake(1_000, 1, W, P, 0), // wrk on CPU 1 wakes the proxy onto CPU 0
      sw(1_400, 0, 0, 'R', P), // idle → proxy: 400 ns run-queue latency
      enter(2_000, P, 0), // read
      enter(3_000, P, 1), // write: 1,600 ns after it ran
      wake(3_500, 0, P, B, 0), // the write wakes the backend onto the proxy's CPU
      enter(6_000, P, 232), // epoll_wait
      sw(7_000, 0, P, 'S', B), // proxy sleeps; the backend runs 3,500 ns after its wake-up
    ],
    new Set([P]),
  );
  assert.equal(a.legs.length, 1);
  const leg = a.legs[0]!;
  assert.equal(leg.waker, W);
  assert.equal(leg.wakeDelayNs, 400);
  assert.equal(leg.toWriteNs, 1_600);
  assert.equal(leg.afterWriteNs, 4_000);
  assert.equal(leg.runNs, 5_600);
  assert.equal(leg.syscalls, 3);
  assert.deepEqual(leg.nrs, [0, 1, 232]);
  assert.deepEqual(leg.writeAtNs, [2_000]);
  assert.equal(leg.writes, 1);
  assert.equal(leg.wakee, B);
  assert.equal(leg.wakeeSameCpu, true);
  assert.equal(leg.wakeeDelayNs, 3_500);
  assert.deepEqual(a.wakeDelays.get(B), [{ wakee: B, waker: P, delayNs: 3_500, sameCpu: true }]);
  assert.equal(a.runNs.get(P), 5_600);
});

test('a preemption is counted apart from the run time, and the leg goes on until the thread sleeps', () => {
  const a = analyzeTrace(
    [
      wake(0, 1, W, P, 0),
      sw(100, 0, 0, 'R', P),
      sw(1_100, 0, P, 'R+', W), // preempted after 1,000 ns
      sw(5_100, 0, W, 'S', P), // back 4,000 ns later
      enter(5_600, P, 20), // writev
      wake(5_700, 0, P, B, 1), // the backend goes to the other CPU
      sw(5_900, 1, 0, 'R', B),
      sw(6_100, 0, P, 'S', 0),
    ],
    new Set([P]),
  );
  const leg = a.legs[0]!;
  assert.equal(leg.preemptions, 1);
  assert.equal(leg.preemptedNs, 4_000);
  assert.deepEqual(leg.preemptedBy, [W]);
  assert.equal(leg.runNs, 2_000);
  assert.equal(leg.toWriteNs, 5_500); // from running to the write, the preemption inside
  assert.equal(leg.wakeeSameCpu, false);
  assert.equal(leg.wakeeDelayNs, 200);
});

test('a thread already runnable when the trace starts makes no leg; one without a write has no write figures', () => {
  const a = analyzeTrace(
    [sw(0, 0, 0, 'R', P), sw(500, 0, P, 'S', 0), wake(1_000, 1, W, P, 0), sw(1_200, 0, 0, 'R', P), enter(1_300, P, 232), sw(1_900, 0, P, 'S', 0)],
    new Set([P]),
  );
  assert.equal(a.legs.length, 1);
  assert.equal(a.legs[0]!.toWriteNs, undefined);
  assert.equal(a.legs[0]!.wakee, undefined);
  assert.equal(a.slices.get(P), 2);
  assert.equal(a.runNs.get(P), 500 + 700);
});

test('only the first wake-up of a sleeping thread counts for its delay', () => {
  const a = analyzeTrace([wake(0, 1, W, B, 0), wake(300, 1, P, B, 0), sw(1_000, 0, 0, 'R', B)], new Set());
  assert.deepEqual(a.wakeDelays.get(B), [{ wakee: B, waker: W, delayNs: 1_000, sameCpu: false }]);
});

test('a wake-up of a thread still on its CPU is no wait: nor is one seen before the thread switched out', () => {
  const a = analyzeTrace(
    [
      sw(0, 0, 0, 'R', B), // the backend runs
      wake(100, 1, P, B, 0), // woken while still running (it had set itself to sleep, not yet switched out)
      sw(200, 0, B, 'S', 0),
      wake(5_000, 1, P, B, 0), // a real wake-up
      sw(5_300, 0, 0, 'R', B),
      wake(6_000, 1, W, P, 1), // the proxy was running before the trace began: its wake-up is void at its switch-out
      sw(7_000, 1, P, 'S', 0),
      sw(9_000, 1, 0, 'R', P),
    ],
    new Set(),
  );
  assert.deepEqual(
    a.wakeDelays.get(B)!.map((d) => d.delayNs),
    [300],
  );
  assert.equal(a.wakeDelays.get(P), undefined);
});

test('quantile by nearest rank, and spread in µs', () => {
  assert.equal(quantile([], 0.5), undefined);
  assert.equal(quantile([5, 1, 3], 0.5), 3);
  assert.equal(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.99), 10);
  assert.equal(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9), 9);
  assert.deepEqual(spread([1_000, 2_000, 3_000, 100_000]), { n: 4, meanUs: 26.5, p50Us: 2, p90Us: 100, p99Us: 100, maxUs: 100 });
  assert.equal(spread([]), undefined);
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 1e9 }), { minLength: 1, maxLength: 50 }), fc.double({ min: 0, max: 1, noNaN: true }), (xs, q) => {
      const v = quantile(xs, q)!;
      assert.ok(xs.includes(v));
      assert.ok(xs.filter((x) => x <= v).length >= Math.ceil(q * xs.length));
    }),
  );
});
