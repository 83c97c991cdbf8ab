// CPU time and resident memory of a process and its descendants, read from /proc (Linux only).
import { readFileSync, readdirSync } from 'node:fs';

/** /proc reports utime and stime in USER_HZ ticks, which Linux fixes at 100 per second. */
const TICKS_PER_SECOND = 100;
const PAGE_BYTES = 4096;

interface Stat {
  ppid: number;
  /** utime + stime. */
  cpuTicks: number;
  rssPages: number;
}

/** The text of /proc/<pid>/stat: the fields after the command name, which may itself contain spaces and parentheses. */
function parseStat(text: string): Stat {
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // After the name: state(0) ppid(1) ... utime(11) stime(12) ... rss(21).
  return {
    ppid: Number(fields[1]),
    cpuTicks: Number(fields[11]) + Number(fields[12]),
    rssPages: Number(fields[21]),
  };
}

function readStat(pid: number): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  return parseStat(text);
}

/** CPU seconds (user + system) of one process; undefined once it is gone. */
export function readCpuSeconds(pid: number): number | undefined {
  const st = readStat(pid);
  return st === undefined ? undefined : st.cpuTicks / TICKS_PER_SECOND;
}

/** root and every living descendant. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = readStat(Number(name));
    if (st) children.set(st.ppid, [...(children.get(st.ppid) ?? []), Number(name)]);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    if (pid !== root || readStat(root)) out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

export interface TreeUsage {
  cpuSeconds: number;
  rssBytes: number;
  processes: number;
}

/** CPU (user + system) and RSS summed over root's tree. RSS of a tree counts shared pages once per process. */
export function readTreeUsage(root: number): TreeUsage {
  let ticks = 0;
  let pages = 0;
  const pids = processTree(root);
  for (const pid of pids) {
    const st = readStat(pid);
    if (!st) continue;
    ticks += st.cpuTicks;
    pages += st.rssPages;
  }
  return { cpuSeconds: ticks / TICKS_PER_SECOND, rssBytes: pages * PAGE_BYTES, processes: pids.length };
}

export interface TreeMemory {
  /** Resident pages, summed per process (pages shared between the processes count once per process). */
  rssBytes: number;
  /** Private anonymous memory (RssAnon): what the processes really add to a node. */
  anonBytes: number;
  /** Proportional set size: shared pages divided among the processes that map them; sums honestly. */
  pssBytes: number;
}

/** Fields of /proc/<pid>/smaps_rollup in bytes; undefined when the process is gone. */
export function readRollup(pid: number): TreeMemory | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
  return { rssBytes: kb('Rss'), anonBytes: kb('Anonymous'), pssBytes: kb('Pss') };
}

/** RssFile from /proc/<pid>/status: what of RSS is file pages (the Node binary's text, libraries). */
export function readRssFile(pid: number): number | undefined {
  try {
    const kb = /^RssFile:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

/** RSS, private anonymous memory and PSS summed over root's tree (nginx's master and workers, kubeward's workers). */
export function readTreeMemory(root: number): TreeMemory {
  const sum: TreeMemory = { rssBytes: 0, anonBytes: 0, pssBytes: 0 };
  for (const pid of processTree(root)) {
    const m = readRollup(pid);
    if (!m) continue;
    sum.rssBytes += m.rssBytes;
    sum.anonBytes += m.anonBytes;
    sum.pssBytes += m.pssBytes;
  }
  return sum;
}

/** The machine's CPU time so far, in ticks: all of it, and the part the hypervisor gave to others (steal). */
export interface MachineTicks {
  total: number;
  steal: number;
}

/**
 * The first line of /proc/stat: `cpu user nice system idle iowait irq softirq steal guest guest_nice`.
 * guest and guest_nice are already inside user and nice, so they are not added again. Undefined
 * for text that is not such a line.
 */
export function parseMachineTicks(text: string): MachineTicks | undefined {
  const line = text.split('\n', 1)[0] ?? '';
  const [name, ...rest] = line.trim().split(/\s+/);
  const f = rest.map(Number);
  if (name !== 'cpu' || f.length < 8 || f.some((v) => !Number.isSafeInteger(v) || v < 0)) return undefined;
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { total, steal: f[7]! };
}

export function readMachineTicks(): MachineTicks | undefined {
  try {
    return parseMachineTicks(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

/** The share of the machine's CPU time the hypervisor took between two readings, in percent. */
export function stealPercent(before: MachineTicks | undefined, after: MachineTicks | undefined): number | undefined {
  if (!before || !after || after.total <= before.total) return undefined;
  return (100 * (after.steal - before.steal)) / (after.total - before.total);
}
