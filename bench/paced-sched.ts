// Where a paced keep-alive request's time goes in each proxy, peers interleaved in one run: for
// each peer, a paced wrk window (64 connections, random 0-20 ms think time, as the bench) read
// through /proc (per thread: run time, run-queue wait and slices from schedstat, context
// switches), then a second window under a system-wide scheduler and system-call trace (perf
// record; bench/sched-trace.ts) split into wake-ups: run-queue latency, time to the first write,
// time after it, and how long the thread the proxy woke then waited. For
// docs/proxy-performance.md, "The paced p99, session 5". Run after npm run build, under the bench lock.
// Usage: node bench/paced-sched.ts [--rounds N] [--duration S] [--trace S] [--clock-only] [--idle N] [--warm S] [--connections N] [--think-ms MS]
//   [--peer nginx|kubeward|haproxy|LABEL=[--node-flag ...] /path/to/bin/kubeward.js[@--flag ...]]...
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { interleavePeers, startPeerProxy, type PeerTurn } from './interleaved-peers.ts';
import { measureIdle, runWrk, type LoadSettings } from './measure-perf.ts';
import { parseWrkOutput, type WrkResult } from './parse-wrk.ts';
import { processTree } from './proc-stats.ts';
import { parseTraceLine, spread, TraceWalker, type Leg, type TraceAnalysis } from './sched-trace.ts';

const { values: opt } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    duration: { type: 'string', default: '5' },
    trace: { type: 'string', default: '2' },
    // The clock window only (no perf trace): for A/B of latency, with more rounds in the same time.
    'clock-only': { type: 'boolean', default: false },
    idle: { type: 'string', default: '0' },
    warm: { type: 'string', default: '6' },
    connections: { type: 'string', default: '64' },
    'think-ms': { type: 'string', default: '10' },
    peer: { type: 'string', multiple: true, default: ['nginx', 'kubeward'] },
  },
});
const DURATION_S = Number(opt.duration);
const TRACE_S = Number(opt.trace);
if (!(TRACE_S > 0 && TRACE_S + 2 <= DURATION_S)) throw new Error('--trace must be > 0 and at least 2 s shorter than --duration');
const saturated: LoadSettings = { durationS: 1, connections: 64, threads: 2 };

interface ThreadStat {
  tid: number;
  comm: string;
  runNs: number;
  waitNs: number;
  slices: number;
  voluntary: number;
  nonvoluntary: number;
}

function readThreads(pids: readonly number[]): Map<number, ThreadStat> {
  const out = new Map<number, ThreadStat>();
  for (const pid of pids) {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const t of tids) {
      try {
        const dir = `/proc/${pid}/task/${t}`;
        const [run, wait, slices] = readFileSync(`${dir}/schedstat`, 'utf8').trim().split(' ').map(Number);
        const status = readFileSync(`${dir}/status`, 'utf8');
        out.set(Number(t), {
          tid: Number(t),
          comm: readFileSync(`${dir}/comm`, 'utf8').trim(),
          runNs: run!,
          waitNs: wait!,
          slices: slices!,
          voluntary: Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0),
          nonvoluntary: Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0),
        });
      } catch {
        // The thread ended between the listing and the read.
      }
    }
  }
  return out;
}

/** wrk as a child of its own, so its threads can be named in the trace. */
function startWrk(url: string, s: LoadSettings): { pid: number; done: Promise<WrkResult> } {
  const args = [`-t${s.threads}`, `-c${s.connections}`, `-d${s.durationS}s`, '--latency', ...(s.script ? ['-s', s.script] : []), url];
  const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (text += d));
  const kill = setTimeout(() => child.kill('SIGKILL'), (s.durationS + 20) * 1000);
  const done = new Promise<WrkResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => {
      clearTimeout(kill);
      try {
        resolve(parseWrkOutput(text));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  });
  return { pid: child.pid!, done };
}

function exitOf(cmd: string, args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code ?? 1));
  });
}

/** `perf script` of a recorded trace, walked line by line (a few seconds are millions of lines). */
async function walkTrace(file: string, watched: ReadonlySet<number>): Promise<TraceAnalysis> {
  const walker = new TraceWalker(watched);
  const child = spawn('perf', ['script', '--ns', '-i', file, '-F', 'comm,tid,pid,cpu,time,event,trace'], { stdio: ['ignore', 'pipe', 'ignore'] });
  for await (const line of createInterface({ input: child.stdout })) {
    const ev = parseTraceLine(line);
    if (ev) walker.push(ev);
  }
  return walker.result();
}

const us = (ns: number, per: number): number => Math.round(ns / per / 100) / 10;

function perThread(before: Map<number, ThreadStat>, after: Map<number, ThreadStat>, requests: number): object[] {
  const rows: object[] = [];
  for (const [tid, a] of after) {
    const b = before.get(tid) ?? { runNs: 0, waitNs: 0, slices: 0, voluntary: 0, nonvoluntary: 0 };
    const slices = a.slices - b.slices;
    if (slices === 0) continue;
    rows.push({
      tid,
      comm: a.comm,
      runUsPerReq: us(a.runNs - b.runNs, requests),
      waitUsPerReq: us(a.waitNs - b.waitNs, requests),
      slicesPerReq: Number((slices / requests).toFixed(3)),
      waitUsPerSlice: us(a.waitNs - b.waitNs, slices),
      nonvoluntaryPerKReq: Number((((a.nonvoluntary - b.nonvoluntary) * 1000) / requests).toFixed(2)),
    });
  }
  return rows;
}

/** Legs that passed on one chunk (one write): one request or one response, nothing batched with it. */
function singleSummary(all: readonly Leg[]): object {
  const legs = all.filter((l) => l.writes === 1);
  const pick = (f: (l: Leg) => number | undefined): number[] => legs.map(f).filter((v): v is number => v !== undefined);
  const nrs = new Map<number, number>();
  for (const l of legs) for (const nr of l.nrs) nrs.set(nr, (nrs.get(nr) ?? 0) + 1);
  const perLeg = Object.fromEntries([...nrs].sort((a, b) => a[0] - b[0]).map(([nr, n]) => [nr, Number((n / Math.max(1, legs.length)).toFixed(2))]));
  return {
    share: Number((legs.length / Math.max(1, all.length)).toFixed(3)),
    syscallsPerLeg: perLeg,
    wakeeSameCpuShare: Number((legs.filter((l) => l.wakeeSameCpu === true).length / Math.max(1, legs.length)).toFixed(3)),
    wakeDelay: spread(pick((l) => l.wakeDelayNs)),
    toWrite: spread(pick((l) => (l.preemptions === 0 ? l.toWriteNs : undefined))),
    afterWrite: spread(pick((l) => (l.preemptions === 0 ? l.afterWriteNs : undefined))),
    wakeeDelaySameCpu: spread(pick((l) => (l.wakeeSameCpu === true ? l.wakeeDelayNs : undefined))),
    wakeeDelayOtherCpu: spread(pick((l) => (l.wakeeSameCpu === false ? l.wakeeDelayNs : undefined))),
    through: spread(pick((l) => (l.toWriteNs !== undefined && l.wakeeDelayNs !== undefined ? l.wakeDelayNs + l.toWriteNs + l.wakeeDelayNs : undefined))),
  };
}

function legSummary(legs: readonly Leg[], requests: number, names: Map<number, string>): object {
  const pick = (f: (l: Leg) => number | undefined): number[] => legs.map(f).filter((v): v is number => v !== undefined);
  const wakers = new Map<string, number>();
  for (const l of legs) wakers.set(names.get(l.waker) ?? 'other', (wakers.get(names.get(l.waker) ?? 'other') ?? 0) + 1);
  const wakees = new Map<string, number>();
  for (const l of legs) if (l.wakee !== undefined) wakees.set(names.get(l.wakee) ?? 'other', (wakees.get(names.get(l.wakee) ?? 'other') ?? 0) + 1);
  // What the proxy adds to a request on one leg: waiting for a CPU, running to its write, and the
  // wait of the thread it woke (which, put on the proxy's own CPU, waits for the proxy to sleep).
  const through = legs.filter((l) => l.toWriteNs !== undefined && l.wakeeDelayNs !== undefined).map((l) => l.wakeDelayNs + l.toWriteNs! + l.wakeeDelayNs!);
  return {
    legsPerReq: Number((legs.length / requests).toFixed(3)),
    writesPerLeg: Number((legs.reduce((a, l) => a + l.writes, 0) / Math.max(1, legs.length)).toFixed(2)),
    syscallsPerLeg: Number((legs.reduce((a, l) => a + l.syscalls, 0) / Math.max(1, legs.length)).toFixed(2)),
    preemptedLegsPerK: Number(((legs.filter((l) => l.preemptions > 0).length * 1000) / Math.max(1, legs.length)).toFixed(2)),
    wakers: Object.fromEntries(wakers),
    preemptedBy: Object.fromEntries(
      legs
        .flatMap((l) => l.preemptedBy)
        .reduce((m, tid) => m.set(names.get(tid) ?? 'other', (m.get(names.get(tid) ?? 'other') ?? 0) + 1), new Map<string, number>()),
    ),
    wakees: Object.fromEntries(wakees),
    /** Per chunk passed on: from the wake-up that brought it to its write (batched ones wait for those before). */
    inProxy: spread(legs.flatMap((l) => l.writeAtNs)),
    /** The same, first chunk of a leg (wake-up delay and the run to the write) and the later ones (also behind the chunks before). */
    inProxyFirst: spread(legs.flatMap((l) => l.writeAtNs.slice(0, 1))),
    inProxyLater: spread(legs.flatMap((l) => l.writeAtNs.slice(1))),
    wakeDelay: spread(pick((l) => l.wakeDelayNs)),
    toWrite: spread(pick((l) => l.toWriteNs)),
    afterWrite: spread(pick((l) => l.afterWriteNs)),
    run: spread(pick((l) => l.runNs)),
    preempted: spread(pick((l) => (l.preemptions > 0 ? l.preemptedNs : undefined))),
    wakeeDelaySameCpu: spread(pick((l) => (l.wakeeSameCpu === true ? l.wakeeDelayNs : undefined))),
    wakeeDelayOtherCpu: spread(pick((l) => (l.wakeeSameCpu === false ? l.wakeeDelayNs : undefined))),
    through: spread(through),
    /** Median on-CPU µs of the wake-ups that passed on k chunks (k = 1..8, unpreempted): a fixed cost per turn plus one per chunk. */
    runByChunks: Object.fromEntries(
      [1, 2, 3, 4, 5, 6, 7, 8].map((k) => [k, spread(legs.filter((l) => l.writes === k && l.preemptions === 0).map((l) => l.runNs))?.p50Us]),
    ),
    single: singleSummary(legs),
  };
}

async function measure(turn: PeerTurn): Promise<void> {
  const { env, spec, round, paced } = turn;
  const backendPid = turn.backend.pid;
  const proxy = await startPeerProxy(turn);
  const url = `http://127.0.0.1:${proxy.port}/`;
  const at = (): string => new Date().toISOString().slice(11, 19);
  try {
    await runWrk(url, saturated);
    if (Number(opt.idle) > 0) await measureIdle(proxy.port, turn.backend.port, proxy.process.pid, Number(opt.idle));
    await runWrk(url, saturated);
    if (Number(opt.warm) > 0) await runWrk(url, { ...paced, durationS: Number(opt.warm) });
    const pids = processTree(proxy.process.pid);
    const load = loadavg()[0]!.toFixed(2);

    // Window 1: the clock and /proc only.
    const before = readThreads([...pids, backendPid]);
    const w1 = startWrk(url, paced);
    const r1 = await w1.done;
    const after = readThreads([...pids, backendPid]);
    const proxyTids = new Set([...after.keys()].filter((tid) => pids.some((p) => existsTask(p, tid))));
    const rows = perThread(before, after, r1.requests).map((r) => ({ ...r, of: proxyTids.has((r as { tid: number }).tid) ? 'proxy' : 'backend' }));
    console.log(
      JSON.stringify({
        peer: spec.label,
        round,
        window: 'clock',
        p50us: Math.round(r1.p50Ms * 1000),
        p99us: Math.round(r1.p99Ms * 1000),
        rps: Math.round(r1.requestsPerSec),
        load,
        at: at(),
        threads: rows,
      }),
    );

    if (opt['clock-only']) return;
    // Window 2: under the trace (its own cost slows every peer alike; the clock figures above are the ones to quote).
    const file = join(env.dir, `${spec.label}-r${round}.perf`);
    const w2 = startWrk(url, paced);
    await new Promise((r) => setTimeout(r, 1000));
    const wrkTids = readdirSync(`/proc/${w2.pid}/task`).map(Number);
    const code = await exitOf('perf', [
      'record',
      '-q',
      '-a',
      '-e',
      'sched:sched_switch,sched:sched_wakeup,raw_syscalls:sys_enter,raw_syscalls:sys_exit',
      '--exclude-perf',
      '-o',
      file,
      '--',
      'sleep',
      String(TRACE_S),
    ]);
    const r2 = await w2.done;
    if (code !== 0) throw new Error(`perf record exited ${code}`);
    const threads = readThreads(pids);
    const names = new Map<number, string>();
    for (const [tid, t] of threads) names.set(tid, `proxy:${t.comm}`);
    names.set(backendPid, 'backend');
    for (const tid of wrkTids) names.set(tid, 'wrk');
    const a = await walkTrace(file, new Set(threads.keys()));
    await rm(file, { force: true });
    const windowS = (a.lastNs - a.firstNs) / 1e9;
    const requests = r2.requestsPerSec * windowS;
    const main = [...threads.values()].sort((x, y) => (a.runNs.get(y.tid) ?? 0) - (a.runNs.get(x.tid) ?? 0))[0]!;
    const others = [...threads.values()]
      .filter((t) => t.tid !== main.tid && (a.slices.get(t.tid) ?? 0) > 0)
      .map((t) => ({ tid: t.tid, comm: t.comm, slices: a.slices.get(t.tid), runUs: us(a.runNs.get(t.tid) ?? 0, 1) }));
    const delaysOf = (tids: readonly number[], fromProxy: boolean): number[] =>
      tids.flatMap((tid) => (a.wakeDelays.get(tid) ?? []).filter((d) => threads.has(d.waker) === fromProxy).map((d) => d.delayNs));
    console.log(
      JSON.stringify({
        peer: spec.label,
        round,
        window: 'trace',
        p50us: Math.round(r2.p50Ms * 1000),
        p99us: Math.round(r2.p99Ms * 1000),
        rps: Math.round(r2.requestsPerSec),
        traceS: Number(windowS.toFixed(2)),
        load: loadavg()[0]!.toFixed(2),
        at: at(),
        main: {
          tid: main.tid,
          comm: main.comm,
          ...legSummary(
            a.legs.filter((l) => l.tid === main.tid),
            requests,
            names,
          ),
        },
        otherThreads: others,
        backendWokenByProxy: spread(delaysOf([backendPid], true)),
        wrkWokenByProxy: spread(delaysOf(wrkTids, true)),
        backendWokenByOthers: spread(delaysOf([backendPid], false)),
      }),
    );
  } finally {
    await env.group.stop(proxy.process);
  }
}

function existsTask(pid: number, tid: number): boolean {
  try {
    readFileSync(`/proc/${pid}/task/${tid}/stat`);
    return true;
  } catch {
    return false;
  }
}

const connections = Number(opt.connections);
await interleavePeers(
  {
    name: 'paced',
    peers: opt.peer,
    rounds: Number(opt.rounds),
    paced: { durationS: DURATION_S, connections, threads: Math.min(2, connections) },
    thinkMs: Number(opt['think-ms']),
  },
  measure,
);
