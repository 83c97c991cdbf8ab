// Reads a system-wide scheduler and system-call trace (`perf record -a -e sched:sched_switch,
// sched:sched_wakeup,raw_syscalls:sys_enter,raw_syscalls:sys_exit`, printed by `perf script --ns`)
// into what a proxy's request costs in time: for each wake-up of a proxy thread (a "leg": woken,
// runs, goes back to sleep), how long it waited for a CPU after the wake-up (run-queue latency),
// how long it ran before its first write (the bytes passed on), how long it ran after that write
// before sleeping again, how long it was preempted, and how long the thread its write woke (the
// backend, or the client that gets the response) then waited for a CPU. Pure: text in, numbers out.
// Used by bench/paced-sched.ts (docs/proxy-performance.md, "The paced p99, session 5").

/** x86-64 system-call numbers that pass bytes on: write, writev, sendto, sendmsg. */
export const WRITE_SYSCALLS: ReadonlySet<number> = new Set([1, 20, 44, 46]);

export type TraceEvent =
  | { kind: 'switch'; ns: number; cpu: number; tid: number; prevTid: number; prevState: string; nextTid: number }
  | { kind: 'wakeup'; ns: number; cpu: number; tid: number; wakee: number; targetCpu: number }
  | { kind: 'enter'; ns: number; cpu: number; tid: number; nr: number }
  | { kind: 'exit'; ns: number; cpu: number; tid: number; nr: number };

// "  comm  tid/pid [cpu] 45257.962725123: event: details" (comm may hold spaces; pid may be "-").
const LINE = /^\s*.*?\s+(\d+)\/(?:-?\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+(\S+):\s*(.*)$/;
const SWITCH = /prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> .*next_pid=(\d+) next_prio=/;
const WAKEUP = / pid=(\d+) prio=\d+ target_cpu=(\d+)/;
const SYS = /^NR (-?\d+)/;

/** One line of `perf script --ns`; undefined for a line that is not one of the four events. */
export function parseTraceLine(line: string): TraceEvent | undefined {
  const m = LINE.exec(line);
  if (!m) return undefined;
  const tid = Number(m[1]);
  const cpu = Number(m[2]);
  const ns = Number(m[3]) * 1e9 + Number(m[4]);
  const event = m[5]!;
  const rest = m[6]!;
  if (event === 'sched:sched_switch') {
    const s = SWITCH.exec(rest);
    return s ? { kind: 'switch', ns, cpu, tid, prevTid: Number(s[1]), prevState: s[2]!, nextTid: Number(s[3]) } : undefined;
  }
  if (event === 'sched:sched_wakeup') {
    const w = WAKEUP.exec(rest);
    return w ? { kind: 'wakeup', ns, cpu, tid, wakee: Number(w[1]), targetCpu: Number(w[2]) } : undefined;
  }
  if (event === 'raw_syscalls:sys_enter' || event === 'raw_syscalls:sys_exit') {
    const n = SYS.exec(rest);
    return n ? { kind: event === 'raw_syscalls:sys_enter' ? 'enter' : 'exit', ns, cpu, tid, nr: Number(n[1]) } : undefined;
  }
  return undefined;
}

/** One wake-up of a watched thread, from the wake-up to the switch that put it back to sleep. Times in ns. */
export interface Leg {
  tid: number;
  /** Who woke it (a tid; 0 for an interrupt on an idle CPU). */
  waker: number;
  /** From the wake-up to running (run-queue latency). */
  wakeDelayNs: number;
  /** From running to its first write's system call; undefined if it wrote nothing. */
  toWriteNs: number | undefined;
  /** From its first write to going to sleep. */
  afterWriteNs: number | undefined;
  /** Off the CPU with work to do (switched out runnable) between running and sleeping. */
  preemptedNs: number;
  preemptions: number;
  /** The threads that took the CPU at its preemptions. */
  preemptedBy: number[];
  /** On the CPU, from running to sleeping, preemptions left out. */
  runNs: number;
  syscalls: number;
  /**
   * For each write, ns from the wake-up to the write's system call: how long a chunk that arrived
   * with the wake-up spent in the proxy (a later write of a batched leg waited for the earlier ones).
   */
  writeAtNs: number[];
  /** The system calls it entered, by number, in order. */
  nrs: number[];
  writes: number;
  /** The thread its first write woke, and how long that thread then waited for a CPU. */
  wakee: number | undefined;
  wakeeDelayNs: number | undefined;
  /** The wakee was put on the CPU this thread was running on (it waits until this thread sleeps or is preempted). */
  wakeeSameCpu: boolean | undefined;
}

/** A wake-up of any thread and how long the woken thread waited for a CPU. */
export interface WakeDelay {
  wakee: number;
  waker: number;
  delayNs: number;
  sameCpu: boolean;
}

export interface TraceAnalysis {
  legs: Leg[];
  /** Every wake-up in the trace whose wakee then ran, keyed by wakee. */
  wakeDelays: Map<number, WakeDelay[]>;
  /** On-CPU ns per thread over the trace (from its switches). */
  runNs: Map<number, number>;
  /** Switches in per thread. */
  slices: Map<number, number>;
  firstNs: number;
  lastNs: number;
}

interface OpenLeg {
  leg: Leg;
  wakeNs: number;
  onNs: number;
  firstWriteNs: number | undefined;
  preemptedAtNs: number | undefined;
}

interface PendingWake {
  ns: number;
  waker: number;
  sameCpu: boolean;
}

/**
 * Takes the events in time order (as perf script prints them), one at a time. Legs are made for the
 * threads in `watched`; wake-up delays and run time for every thread.
 */
export class TraceWalker {
  readonly #watched: ReadonlySet<number>;
  readonly #legs: Leg[] = [];
  readonly #wakeDelays = new Map<number, WakeDelay[]>();
  readonly #runNs = new Map<number, number>();
  readonly #slices = new Map<number, number>();
  readonly #onSince = new Map<number, number>();
  readonly #pending = new Map<number, PendingWake>();
  readonly #open = new Map<number, OpenLeg>();
  /** The leg whose first write woke this thread, until it runs. */
  readonly #wakeeOf = new Map<number, OpenLeg>();
  #firstNs = Number.NaN;
  #lastNs = Number.NaN;

  constructor(watched: ReadonlySet<number>) {
    this.#watched = watched;
  }

  push(ev: TraceEvent): void {
    if (Number.isNaN(this.#firstNs)) this.#firstNs = ev.ns;
    this.#lastNs = ev.ns;
    if (ev.kind === 'wakeup') this.#wakeup(ev);
    else if (ev.kind === 'enter') this.#enter(ev);
    else if (ev.kind === 'switch') this.#switch(ev);
  }

  result(): TraceAnalysis {
    return { legs: this.#legs, wakeDelays: this.#wakeDelays, runNs: this.#runNs, slices: this.#slices, firstNs: this.#firstNs, lastNs: this.#lastNs };
  }

  #wakeup(ev: Extract<TraceEvent, { kind: 'wakeup' }>): void {
    // The kernel also traces a wake-up of a thread still on its CPU (it was about to sleep, or
    // runnable after a preemption): no wait for a CPU follows from it.
    if (this.#onSince.has(ev.wakee)) return;
    if (!this.#pending.has(ev.wakee)) this.#pending.set(ev.wakee, { ns: ev.ns, waker: ev.tid, sameCpu: ev.targetCpu === ev.cpu });
    const waker = this.#open.get(ev.tid);
    if (waker && waker.firstWriteNs !== undefined && waker.leg.wakee === undefined && ev.wakee !== ev.tid) {
      waker.leg.wakee = ev.wakee;
      waker.leg.wakeeSameCpu = ev.targetCpu === ev.cpu;
      this.#wakeeOf.set(ev.wakee, waker);
    }
  }

  #enter(ev: Extract<TraceEvent, { kind: 'enter' }>): void {
    const o = this.#open.get(ev.tid);
    if (!o) return;
    o.leg.syscalls++;
    o.leg.nrs.push(ev.nr);
    if (WRITE_SYSCALLS.has(ev.nr)) {
      o.leg.writes++;
      o.leg.writeAtNs.push(ev.ns - o.wakeNs);
      if (o.firstWriteNs === undefined) o.firstWriteNs = ev.ns;
    }
  }

  #switch(ev: Extract<TraceEvent, { kind: 'switch' }>): void {
    // The thread going off the CPU.
    const since = this.#onSince.get(ev.prevTid);
    if (since !== undefined) {
      this.#runNs.set(ev.prevTid, (this.#runNs.get(ev.prevTid) ?? 0) + ev.ns - since);
      this.#onSince.delete(ev.prevTid);
    }
    // A wake-up seen while the thread was still running (before the trace knew it was) is void too.
    this.#pending.delete(ev.prevTid);
    this.#wakeeOf.delete(ev.prevTid);
    const out = this.#open.get(ev.prevTid);
    if (out) {
      if (ev.prevState.startsWith('R')) {
        out.preemptedAtNs = ev.ns;
        out.leg.preemptions++;
        out.leg.preemptedBy.push(ev.nextTid);
      } else {
        closeLeg(out, ev.ns);
        this.#legs.push(out.leg);
        this.#open.delete(ev.prevTid);
      }
    }
    // The thread coming on.
    const tid = ev.nextTid;
    this.#onSince.set(tid, ev.ns);
    this.#slices.set(tid, (this.#slices.get(tid) ?? 0) + 1);
    const wake = this.#pending.get(tid);
    this.#pending.delete(tid);
    if (wake) {
      const list = this.#wakeDelays.get(tid) ?? [];
      list.push({ wakee: tid, waker: wake.waker, delayNs: ev.ns - wake.ns, sameCpu: wake.sameCpu });
      this.#wakeDelays.set(tid, list);
      const by = this.#wakeeOf.get(tid);
      if (by) {
        by.leg.wakeeDelayNs = ev.ns - wake.ns;
        this.#wakeeOf.delete(tid);
      }
    }
    if (!this.#watched.has(tid)) return;
    const resumed = this.#open.get(tid);
    if (resumed) {
      if (resumed.preemptedAtNs !== undefined) resumed.leg.preemptedNs += ev.ns - resumed.preemptedAtNs;
      resumed.preemptedAtNs = undefined;
    } else if (wake) {
      this.#open.set(tid, { leg: newLeg(tid, wake.waker, ev.ns - wake.ns), wakeNs: wake.ns, onNs: ev.ns, firstWriteNs: undefined, preemptedAtNs: undefined });
    }
    // A thread that runs without a wake-up seen (the trace began while it was runnable) starts no leg.
  }
}

/** A TraceWalker over a list or any other iterable of events. */
export function analyzeTrace(events: Iterable<TraceEvent>, watched: ReadonlySet<number>): TraceAnalysis {
  const walker = new TraceWalker(watched);
  for (const ev of events) walker.push(ev);
  return walker.result();
}

function newLeg(tid: number, waker: number, wakeDelayNs: number): Leg {
  return {
    tid,
    waker,
    wakeDelayNs,
    toWriteNs: undefined,
    afterWriteNs: undefined,
    preemptedNs: 0,
    preemptions: 0,
    preemptedBy: [],
    runNs: 0,
    syscalls: 0,
    writeAtNs: [],
    nrs: [],
    writes: 0,
    wakee: undefined,
    wakeeDelayNs: undefined,
    wakeeSameCpu: undefined,
  };
}

function closeLeg(o: OpenLeg, sleepNs: number): void {
  const total = sleepNs - o.onNs;
  o.leg.runNs = total - o.leg.preemptedNs;
  if (o.firstWriteNs !== undefined) {
    o.leg.toWriteNs = o.firstWriteNs - o.onNs;
    o.leg.afterWriteNs = sleepNs - o.firstWriteNs;
  }
}

/** The q-quantile (0..1) of values by the nearest-rank method; undefined for none. */
export function quantile(values: readonly number[], q: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1];
}

export interface Spread {
  n: number;
  meanUs: number;
  p50Us: number;
  p90Us: number;
  p99Us: number;
  maxUs: number;
}

/** Count, mean and quantiles in µs of a list of ns. */
export function spread(ns: readonly number[]): Spread | undefined {
  if (ns.length === 0) return undefined;
  const us = (v: number | undefined): number => Math.round((v ?? 0) / 100) / 10;
  return {
    n: ns.length,
    meanUs: us(ns.reduce((a, b) => a + b, 0) / ns.length),
    p50Us: us(quantile(ns, 0.5)),
    p90Us: us(quantile(ns, 0.9)),
    p99Us: us(quantile(ns, 0.99)),
    maxUs: us(ns.reduce((a, b) => Math.max(a, b), -Infinity)),
  };
}
