// Per-CPU utilization over a measurement window, from two readings of /proc/stat: which side
// (the load on one core, the proxy on the other) was the bottleneck. Pure apart from readProcStat.
import { readFileSync } from 'node:fs';
import { parseStat, processTree } from './proc-stats.ts';

/** One CPU's counters from a "cpuN" line, in USER_HZ ticks. */
export interface CpuTicks {
  /** Everything but idle and iowait. */
  busy: number;
  total: number;
  /** irq + softirq, inside busy. With tick accounting (this kernel: no CONFIG_IRQ_TIME_ACCOUNTING) a tick that lands in a softirq is counted here and not in the task it interrupted, so loopback traffic's receive work is here, whoever caused it. */
  irq: number;
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
    out.set(Number(m[1]), { busy, total: busy + idle + iowait, irq: irq + softirq });
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

/**
 * CPU ticks (user + system) of root's tree: every living descendant, plus what root's reaped
 * children used (cutime, cstime: a wrk or openloop run that ended inside the window). What the
 * CPUs were busy with beyond this, over a window, is other processes' (another helper's tsc) and
 * the kernel's own threads.
 */
export function treeTicks(statTexts: ReadonlyMap<number, string>, root: number): number {
  let ticks = 0;
  for (const [pid, text] of statTexts) {
    const st = parseStat(text);
    ticks += st.cpuTicks;
    if (pid === root) ticks += st.childTicks;
  }
  return ticks;
}

/** Busy ticks of all CPUs together, without irq and softirq (tasks' time and steal). */
export function totalTaskBusy(m: Map<number, CpuTicks>): number {
  let busy = 0;
  for (const t of m.values()) busy += t.busy - t.irq;
  return busy;
}

export function readProcStat(): Map<number, CpuTicks> {
  return parseProcStat(readFileSync('/proc/stat', 'utf8'));
}

export interface WindowReading {
  cpus: Map<number, CpuTicks>;
  /** treeTicks of the bench's own tree (load, backend, proxy). */
  mine: number;
}

export function readWindow(root: number): WindowReading {
  const cpus = readProcStat();
  const texts = new Map<number, string>();
  for (const pid of processTree(root)) {
    try {
      texts.set(pid, readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      // gone between the listing and the read
    }
  }
  return { cpus, mine: treeTicks(texts, root) };
}

/**
 * Each CPU's busy share over the window; the tasks' CPU time outside the bench's tree (other
 * processes on the machine, kernel threads such as ksoftirqd, the hypervisor's steal) and the
 * irq + softirq time (mostly the bench's own loopback traffic), each as a percentage of one CPU.
 * A turn with much foreign time measured a busy machine, not only the peer.
 */
export function windowShares(a: WindowReading, b: WindowReading): { busy: Map<number, number>; foreignPct: number; irqPct: number } {
  const busy = busyShares(a.cpus, b.cpus);
  let elapsed = 0;
  for (const [cpu, t] of a.cpus) elapsed += (b.cpus.get(cpu)?.total ?? t.total) - t.total;
  const perCpu = a.cpus.size > 0 ? elapsed / a.cpus.size : 0;
  const foreign = totalTaskBusy(b.cpus) - totalTaskBusy(a.cpus) - (b.mine - a.mine);
  let irq = 0;
  for (const [cpu, t] of a.cpus) irq += (b.cpus.get(cpu)?.irq ?? t.irq) - t.irq;
  const pct = (ticks: number): number => (perCpu > 0 ? Math.max(0, (ticks / perCpu) * 100) : 0);
  return { busy, foreignPct: pct(foreign), irqPct: pct(irq) };
}
