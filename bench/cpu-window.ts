// Per-CPU utilization over a measurement window, from two readings of /proc/stat: which side
// (the load on one core, the proxy on the other) was the bottleneck. Pure apart from readProcStat.
import { readFileSync } from 'node:fs';

/** One CPU's counters from a "cpuN" line, in USER_HZ ticks. */
export interface CpuTicks {
  /** Everything but idle and iowait. */
  busy: number;
  total: number;
}

/**
 * The "cpuN" lines of /proc/stat (not the "cpu" sum), by N. Fields after the name: user nice
 * system idle iowait irq softirq steal guest guest_nice; guest time is already inside user and
 * nice (kernel/sched/cputime.c), so it is not added again. Older kernels print fewer fields.
 */
export function parseProcStat(text: string): Map<number, CpuTicks> {
  const out = new Map<number, CpuTicks>();
  for (const line of text.split('\n')) {
    const m = /^cpu(\d+)((?:\s+\d+){4,10})\s*$/.exec(line);
    if (!m) continue;
    const f = m[2]!.trim().split(/\s+/).map(Number);
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f;
    const busy = user + nice + system + irq + softirq + steal;
    out.set(Number(m[1]), { busy, total: busy + idle + iowait });
  }
  return out;
}

/** Busy share (0..1) of each CPU between two readings; a CPU with no ticks in between, or missing from either, is left out. */
export function busyShares(before: Map<number, CpuTicks>, after: Map<number, CpuTicks>): Map<number, number> {
  const out = new Map<number, number>();
  for (const [cpu, b] of before) {
    const a = after.get(cpu);
    if (!a) continue;
    const total = a.total - b.total;
    if (total <= 0) continue;
    out.set(cpu, Math.min(1, Math.max(0, (a.busy - b.busy) / total)));
  }
  return out;
}

export function readProcStat(): Map<number, CpuTicks> {
  return parseProcStat(readFileSync('/proc/stat', 'utf8'));
}
