import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readCpuSeconds } from './proc-stats.ts';

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
