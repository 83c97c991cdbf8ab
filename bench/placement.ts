// Where the bench's processes run on this 2-core machine. "shared": wherever the scheduler puts
// them (the bench as it always ran). "pinned": the proxy under test alone on CPU 1, and the load
// generator, the backend and the bench itself on CPU 0, so the proxy's latency is not its wait
// behind wrk or the backend on the same core. Set with sched_setaffinity through taskset -a on
// every thread of a process tree; threads and processes created later inherit it.
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { processTree } from './proc-stats.ts';

const run = promisify(execFile);

export const PLACEMENTS = ['shared', 'pinned'] as const;
export type Placement = (typeof PLACEMENTS)[number];

export interface CpuSets {
  /** The proxy under test. */
  proxy: string;
  /** wrk or openloop, the backend, the bench's own process. */
  load: string;
}

/** CPU lists (taskset syntax) for a placement on a machine with `cores` CPUs; pinned needs two. */
export function cpuSets(placement: Placement, cores: number): CpuSets {
  const all = cores > 1 ? `0-${cores - 1}` : '0';
  if (placement === 'shared') return { proxy: all, load: all };
  if (cores < 2) throw new Error('placement pinned needs at least 2 CPUs');
  return { proxy: '1', load: '0' };
}

/** "shared" or "pinned" (a comma list, or "both"); throws with the accepted words. */
export function parsePlacements(text: string): Placement[] {
  const words = text === 'both' ? [...PLACEMENTS] : text.split(',').map((w) => w.trim());
  const out: Placement[] = [];
  for (const w of words) {
    if (!(PLACEMENTS as readonly string[]).includes(w)) throw new Error(`--placement: "${w}" is not shared, pinned or both`);
    if (!out.includes(w as Placement)) out.push(w as Placement);
  }
  if (out.length === 0) throw new Error('--placement: empty');
  return out;
}

/** Every thread of pid's tree allowed on `cpus` only. */
export async function pinTree(pid: number, cpus: string): Promise<void> {
  for (const p of processTree(pid)) await pinProcess(p, cpus);
}

/** Every thread of pid (not its children: the bench's own process is the parent of all it starts). */
export async function pinProcess(pid: number, cpus: string): Promise<void> {
  try {
    await run('taskset', ['-a', '-p', '-c', cpus, String(pid)]);
  } catch (err) {
    // A process that ended between the listing and taskset is no error; any other failure is.
    if (readThreadsAllowed(pid).length > 0) throw err;
  }
}

/** Cpus_allowed_list of every thread of pid (empty once it is gone). */
export function readThreadsAllowed(pid: number): string[] {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const t of tids) {
    try {
      const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8'));
      if (m) out.push(m[1]!);
    } catch {
      // the thread ended
    }
  }
  return out;
}

/** Throws unless every thread of pid's tree is allowed exactly `cpus` (as the kernel prints it: "1", "0-1"). */
export function checkPinned(pid: number, cpus: string): void {
  const tree = processTree(pid);
  const wrong = tree.flatMap((p) =>
    readThreadsAllowed(p)
      .filter((a) => a !== cpus)
      .map((a) => `${p}:${a}`),
  );
  if (wrong.length > 0) throw new Error(`placement: threads of ${pid} not on CPU ${cpus}: ${wrong.slice(0, 5).join(', ')}`);
}
