import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { busyShares, parseProcStat, readProcStat, readWindow, treeTicks, windowShares } from './cpu-window.ts';

// /proc/stat of a 2-CPU machine (Linux 6.x: ten fields per line).
const STAT = `cpu  1000 10 500 8000 100 0 40 0 0 0
cpu0 600 5 300 3900 50 0 30 0 0 0
cpu1 400 5 200 4100 50 0 10 0 0 0
intr 12345 0 0
ctxt 999
btime 1700000000
`;

test('parseProcStat reads each cpuN line, not the sum; busy leaves out idle and iowait', () => {
  const m = parseProcStat(STAT);
  assert.deepEqual([...m.keys()], [0, 1]);
  assert.deepEqual(m.get(0), { busy: 600 + 5 + 300 + 30, total: 600 + 5 + 300 + 30 + 3900 + 50, irq: 30 });
  assert.deepEqual(parseProcStat('cpu0 1 2 3 4\n').get(0), { busy: 6, total: 10, irq: 0 }, 'older kernels print four fields');
  assert.equal(parseProcStat('cpu0 1 2 3\ncpux 1 2 3 4 5\n').size, 0);
});

test('busyShares: a core busy for 90 of 100 ticks is 0.9; a CPU with no ticks between readings is left out', () => {
  const before = parseProcStat('cpu0 100 0 0 100 0 0 0 0 0 0\ncpu1 0 0 0 100 0 0 0 0 0 0\n');
  const after = parseProcStat('cpu0 180 0 10 110 0 0 0 0 0 0\ncpu1 0 0 0 100 0 0 0 0 0 0\n');
  assert.deepEqual(busyShares(before, after), new Map([[0, 0.9]]));
});

const fields = fc.array(fc.nat({ max: 1e9 }), { minLength: 10, maxLength: 10 });

test('property: any two readings of counters that only grow give shares between 0 and 1, and parsing keeps every field', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fields, fields), { minLength: 1, maxLength: 8 }), (cpus) => {
      const line = (i: number, f: number[]): string => `cpu${i} ${f.join(' ')}`;
      const before = parseProcStat(cpus.map(([a], i) => line(i, a)).join('\n'));
      const after = parseProcStat(
        cpus
          .map(([a, d], i) =>
            line(
              i,
              a.map((v, k) => v + d[k]!),
            ),
          )
          .join('\n'),
      );
      assert.equal(before.size, cpus.length);
      cpus.forEach(([a], i) =>
        assert.equal(
          before.get(i)!.total,
          a.slice(0, 8).reduce((s, v) => s + v, 0),
        ),
      );
      for (const share of busyShares(before, after).values()) assert.ok(share >= 0 && share <= 1);
    }),
  );
});

test('this machine: /proc/stat has a line per CPU', () => {
  assert.ok(readProcStat().size >= 1);
});

// /proc/<pid>/stat after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ...
const stat = (name: string, utime: number, stime: number, cutime: number, cstime: number): string =>
  `42 (${name}) S 1 42 42 0 -1 4194560 100 0 0 0 ${utime} ${stime} ${cutime} ${cstime} 20 0 1 0 100 1000 10`;

test("treeTicks: each process's own time, and the root's reaped children's; a name with spaces and parentheses is read right", () => {
  const texts = new Map([
    [10, stat('node', 100, 50, 30, 20)],
    [11, stat('nginx: worker (x) y', 7, 3, 1000, 1000)],
  ]);
  assert.equal(treeTicks(texts, 10), 100 + 50 + 30 + 20 + 7 + 3);
});

test("windowShares: what the CPUs did beyond the bench's tree is other processes', in % of one CPU", () => {
  const a = { cpus: parseProcStat('cpu0 0 0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0 0 0\n'), mine: 0 };
  // 100 ticks per CPU elapsed; 150 busy in all, 10 of them softirq and 110 the bench's tasks': 30 ticks of other tasks, 30 % of one CPU.
  const b = { cpus: parseProcStat('cpu0 90 0 0 0 0 0 10 0 0 0\ncpu1 50 0 0 50 0 0 0 0 0 0\n'), mine: 110 };
  const w = windowShares(a, b);
  assert.equal(w.foreignPct, 30);
  assert.equal(w.irqPct, 10);
  assert.deepEqual(
    w.busy,
    new Map([
      [0, 1],
      [1, 0.5],
    ]),
  );
  assert.ok(readWindow(process.pid).mine > 0);
});
