import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { parseMachineTicks, readCpuSeconds, readMachineTicks, readRssFile, stealPercent } from './proc-stats.ts';

test("a process's CPU seconds come from its /proc stat, and a process that is gone has none", () => {
  const before = readCpuSeconds(process.pid);
  assert.ok(before !== undefined && before >= 0);
  // Burn CPU until the kernel's tick counter moves (bounded: at most 5 s).
  const until = Date.now() + 5000;
  while (readCpuSeconds(process.pid)! <= before && Date.now() < until) for (let i = 0; i < 1e6; i++);
  assert.ok(readCpuSeconds(process.pid)! > before, 'the reading grows with the CPU this process uses');
  const gone = spawnSync('true').pid;
  assert.equal(readCpuSeconds(gone), undefined);
});

test("readRssFile reads this process's file-backed resident pages, and nothing for a pid that is gone", () => {
  const bytes = readRssFile(process.pid);
  assert.ok(bytes !== undefined && bytes > 0 && bytes % 1024 === 0, String(bytes));
  assert.equal(readRssFile(2 ** 22 + 1), undefined);
});

test("steal is the share of the machine's CPU time the hypervisor took between two /proc/stat readings", () => {
  const a = parseMachineTicks('cpu  100 5 50 800 10 0 5 30 7 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n');
  assert.deepEqual(a, { total: 1000, steal: 30 });
  const b = parseMachineTicks('cpu  200 5 60 850 10 0 5 70 9 0');
  assert.equal(stealPercent(a, b), 20, '40 of 200 ticks');
  assert.equal(stealPercent(b, a), undefined, 'readings out of order say nothing');
  assert.equal(stealPercent(a, undefined), undefined);
  for (const bad of ['', 'intr 1 2 3', 'cpu 1 2 3', 'cpu 1 2 3 4 5 6 7 x', 'cpu0 1 2 3 4 5 6 7 8']) assert.equal(parseMachineTicks(bad), undefined, bad);
  const live = readMachineTicks();
  assert.ok(live && live.total > 0 && live.steal <= live.total, 'this machine');
});
