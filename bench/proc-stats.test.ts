import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readCpuSeconds, readRssFile } from './proc-stats.ts';

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
