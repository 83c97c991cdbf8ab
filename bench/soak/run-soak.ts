// The soak: one kubeward proxy as shipped, three TLS apiserver stand-ins (each its own process),
// and a load of one-shot TLS connections, keep-alive requests and long-lived watch streams, while
// the upstreams are killed, hung, drained and the proxy reloaded on a schedule. It samples the
// proxy's RSS, private anonymous memory and descriptors at rest, under load and after the load,
// and counts failed requests under the fault that was in force. Every loop is bounded by the
// duration; every process started is stopped by its pid.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readdirSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestCa } from '../../testkit/certs.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { readRollup, readRssFile } from '../proc-stats.ts';
import { faultAt, faultIn, faultSchedule, FAULT_KINDS, secondHalf, slopePer10Min, type Fault, type FaultKind, type MemorySample } from './soak-plan.ts';

/** Failed requests kept with their details (the counts cover them all). */
const MAX_FAILURES_KEPT = 500;

export interface SoakOptions {
  /** How long the load runs. */
  durationMs: number;
  /** One fault per period (soak-plan.ts). */
  periodMs: number;
  /** At rest before the load (the baseline) and idle after it (the "after load" figure). */
  restMs: number;
  afterMs: number;
  sampleMs: number;
  /** One-shot requests, each on a new TLS connection, per second. */
  newConnsPerSec: number;
  /** Requests per second over keepAliveConns keep-alive connections. */
  keepAlivePerSec: number;
  keepAliveConns: number;
  /** Long-lived watch streams, reopened when cut. */
  watches: number;
  /** Runs kubeward: the Node binary and the argv in front of the mode's arguments. */
  kubeward: { node: string; argv: (args: string[]) => string[]; env?: NodeJS.ProcessEnv };
  /** Node binary that runs the stand-ins. */
  node: string;
  /** testkit/apiserver-standin-main.ts */
  standinMain: string;
  log?: (line: string) => void;
  /** The proxy's log (at info: rebalancing, checks' transitions) is written here when given; otherwise it runs at warn and its stderr is kept for errors. */
  proxyLogFile?: string;
}

/** One failed request: what kind, when relative to the fault in force, and what the client saw. */
export interface FailedRequest {
  client: 'one-shot' | 'keep-alive';
  fault: FaultKind | 'none';
  /** Ms since the load began, when sent and when it failed. */
  sentMs: number;
  failedMs: number;
  /** Ms from the fault's start to the failure (undefined under none). */
  sinceFaultMs: number | undefined;
  /** Sent on a keep-alive connection that had carried a request before (Node's reusedSocket). */
  reused: boolean;
  /** The error code (ECONNRESET...) or the message, or "HTTP n". */
  error: string;
}

export interface RequestCounts {
  sent: number;
  failed: number;
  /**
   * GETs sent again, once, because the upstream closed a reused keep-alive connection before any
   * byte of the answer: Go's net/http (client-go, so kubelet and every controller) does the same
   * for a replayable request (transport.go, shouldRetryRequest); the second try counts as any other.
   */
  retried: number;
  /** The first few failures' reasons. */
  examples: string[];
}

export interface SoakReport {
  settings: Omit<SoakOptions, 'kubeward' | 'log' | 'node' | 'standinMain'>;
  faults: Fault[];
  /** Wall-clock time at which the load began (tMs 0), to line the proxy's log up with the samples. */
  loadStartedAt: string;
  samples: MemorySample[];
  atRest: MemorySample;
  peak: MemorySample;
  afterLoad: MemorySample;
  /** Units per 10 minutes, over the whole load and over its second half. */
  slopes: { whole: Record<'rssBytes' | 'anonBytes' | 'fds', number>; secondHalf: Record<'rssBytes' | 'anonBytes' | 'fds', number> };
  /** One-shot and keep-alive requests by the fault in force when they were sent. */
  requests: Record<FaultKind | 'none', RequestCounts>;
  watches: { opened: number; cut: number };
  /** The first MAX_FAILURES_KEPT failed requests. */
  failures: FailedRequest[];
  /** The proxy was still running at the end. */
  proxyAlive: boolean;
}

/** A stand-in process on a fixed port after its first start; killed, stopped and continued by signal. */
class StandinProcess {
  readonly #opts: { node: string; main: string; cert: string; key: string; name: string };
  #child: ChildProcess | undefined;
  port = 0;

  constructor(opts: { node: string; main: string; cert: string; key: string; name: string }) {
    this.#opts = opts;
  }

  async start(): Promise<void> {
    const o = this.#opts;
    const child = spawn(o.node, [o.main, '--cert', o.cert, '--key', o.key, '--port', String(this.port), '--name', o.name], {
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    this.#child = child;
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      const onData = (d: Buffer): void => {
        out += d.toString();
        const m = /listening \S+ (\d+)/.exec(out);
        if (m) {
          child.stdout!.off('data', onData);
          resolve(Number(m[1]));
        }
      };
      child.stdout!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`stand-in ${o.name} exited (${code}) before listening`)));
    });
    child.stdout!.resume();
    this.port = port;
  }

  signal(sig: NodeJS.Signals): void {
    this.#child?.kill(sig);
  }

  command(line: string): void {
    this.#child?.stdin?.write(`${line}\n`);
  }

  /** A graceful shutdown as kube-apiserver's (readyz 503 for delayMs, then the listener closes and connections finish); resolves when the process has exited. */
  async shutdown(delayMs: number): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    this.command(`shutdown ${delayMs}`);
    await exited;
  }

  async kill(): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  }
}

function readFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return -1;
  }
}

async function sample(pid: number, tMs: number, adminPort: number): Promise<MemorySample> {
  const m = readRollup(pid);
  const s: MemorySample = { tMs, rssBytes: m?.rssBytes ?? 0, anonBytes: m?.anonBytes ?? 0, fileBytes: readRssFile(pid), fds: readFds(pid) };
  const text = await fetch(`http://127.0.0.1:${adminPort}/metrics`, { signal: AbortSignal.timeout(2000) })
    .then((r) => r.text())
    .catch(() => '');
  const gauge = (name: string): number | undefined => {
    const v = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1];
    return v === undefined ? undefined : Number(v);
  };
  s.heapTotalBytes = gauge('kubeward_nodejs_heap_size_total_bytes');
  s.heapUsedBytes = gauge('kubeward_nodejs_heap_size_used_bytes');
  s.externalBytes = gauge('kubeward_nodejs_external_memory_bytes');
  return s;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

async function freeLoopbackPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const log = o.log ?? (() => undefined);
  const ca = await createTestCa('kubeward-soak-ca');
  const cert = await ca.issueServer('apiserver', ['DNS:localhost', 'IP:127.0.0.1']);
  const standins = [0, 1, 2].map((i) => new StandinProcess({ node: o.node, main: o.standinMain, cert: cert.certFile, key: cert.keyFile, name: `api-${i}` }));
  let proxy: ChildProcess | undefined;
  const timers = new Set<NodeJS.Timeout>();
  try {
    for (const s of standins) await s.start();
    // The proxy's listen port has to be known before it starts (it is given on the command line);
    // a race with another process for it fails the start loudly below, never silently.
    const port = await freeLoopbackPort();
    const adminPort = await freeLoopbackPort();
    const args = [
      'proxy',
      '--listen',
      `127.0.0.1:${port}`,
      '--health-check',
      'readyz',
      '--ca-file',
      ca.certFile,
      '--admin-address',
      `127.0.0.1:${adminPort}`,
      '--log-level',
      o.proxyLogFile ? 'info' : 'warn',
    ];
    for (const s of standins) args.push('--upstream', `127.0.0.1:${s.port}`);
    proxy = spawn(o.kubeward.node, o.kubeward.argv(args), { stdio: ['ignore', 'ignore', 'pipe'], env: o.kubeward.env });
    let stderr = '';
    proxy.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
    if (o.proxyLogFile) proxy.stderr!.pipe(createWriteStream(o.proxyLogFile));
    const pid = proxy.pid!;
    await waitFor(() => accepts(port), { timeoutMs: 20_000, intervalMs: 50, what: `the proxy on ${port} (stderr: ${stderr})` });
    // bin/kubeward.js re-executes itself with the shipped V8 flags (execve): the pid stays the one that serves.
    const servingPid = (): number => pid;
    const agentFor = (keepAlive: boolean, maxSockets: number) => new Agent({ keepAlive, maxSockets, ca: ca.cert });
    const samples: MemorySample[] = [];
    const started = performance.now() + o.restMs;
    const loadStartedAt = Date.now() + o.restMs;
    const now = () => performance.now() - started;
    const sampleTimer = setInterval(() => void sample(servingPid(), now(), adminPort).then((x) => samples.push(x)), o.sampleMs);
    timers.add(sampleTimer);

    log(`at rest for ${o.restMs / 1000} s`);
    await sleep(o.restMs);
    samples.push(await sample(servingPid(), now(), adminPort));
    const atRest = samples[samples.length - 1]!;

    const schedule = faultSchedule(o.durationMs, o.periodMs, standins.length);
    const requests = Object.fromEntries([...FAULT_KINDS, 'none'].map((k) => [k, { sent: 0, failed: 0, retried: 0, examples: [] as string[] }])) as Record<
      FaultKind | 'none',
      RequestCounts
    >;
    const watches = { opened: 0, cut: 0 };
    let loadOn = true;
    const oneShot = agentFor(false, Infinity);
    const keepAlive = agentFor(true, o.keepAliveConns);
    const failures: FailedRequest[] = [];
    const get = (agent: Agent, path: string, retry = false): void => {
      const sentAt = now();
      if (!retry) requests[faultAt(schedule, o.periodMs, sentAt)].sent++;
      let reused = false;
      let answered = false;
      const fail = (why: string): void => {
        if (!loadOn) return; // the load's own end aborts what is still in flight
        if (reused && !answered && !retry && /^(ECONNRESET|EPIPE|ECONNABORTED)$|socket hang up/.test(why)) {
          requests[faultAt(schedule, o.periodMs, sentAt)].retried++;
          get(agent, path, true);
          return;
        }
        // A request sent just before a fault and cut by it counts under that fault.
        const failedAt = now();
        const atFailure = faultAt(schedule, o.periodMs, failedAt);
        const fault = atFailure === 'none' ? faultAt(schedule, o.periodMs, sentAt) : atFailure;
        const counts = requests[fault];
        counts.failed++;
        const client = agent === keepAlive ? 'keep-alive' : 'one-shot';
        if (counts.examples.length < 5) counts.examples.push(`${Math.round(sentAt / 100) / 10} s ${client}: ${why}`);
        if (failures.length < MAX_FAILURES_KEPT) {
          const f = faultIn(schedule, o.periodMs, failedAt) ?? faultIn(schedule, o.periodMs, sentAt);
          failures.push({
            client,
            fault,
            sentMs: Math.round(sentAt),
            failedMs: Math.round(failedAt),
            sinceFaultMs: f === undefined ? undefined : Math.round(failedAt - f.atMs),
            reused,
            error: why,
          });
        }
      };
      const req = request({ host: '127.0.0.1', port, path, agent, timeout: 5000 }, (res) => {
        answered = true;
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200) fail(`HTTP ${res.statusCode}`);
        });
        res.on('error', (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
      });
      req.on('socket', () => (reused = req.reusedSocket));
      req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
      req.on('error', (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
      req.end();
    };
    const every = (perSec: number, fn: () => void): void => {
      if (perSec <= 0) return;
      // Ticks of at least 10 ms, several requests a tick at high rates.
      const tickMs = Math.max(10, 1000 / perSec);
      let owed = 0;
      const t = setInterval(() => {
        owed += (perSec * tickMs) / 1000;
        for (; owed >= 1 && loadOn; owed--) fn();
      }, tickMs);
      timers.add(t);
    };
    const openWatch = (): void => {
      if (!loadOn) return;
      watches.opened++;
      const req = request({ host: '127.0.0.1', port, path: '/api/v1/namespaces/default/pods?watch=1', agent: oneShot }, (res) => {
        res.resume();
        res.on('close', () => {
          if (!loadOn) return;
          watches.cut++;
          timers.add(setTimeout(openWatch, 200));
        });
      });
      req.on('error', () => {
        if (!loadOn) return;
        watches.cut++;
        timers.add(setTimeout(openWatch, 500));
      });
      req.end();
    };

    log(`load for ${o.durationMs / 1000} s: ${o.newConnsPerSec} new TLS connections/s, ${o.keepAlivePerSec} keep-alive requests/s, ${o.watches} watches`);
    every(o.newConnsPerSec, () => get(oneShot, '/api/v1/namespaces'));
    every(o.keepAlivePerSec, () => get(keepAlive, '/api/v1/pods'));
    for (let i = 0; i < o.watches; i++) openWatch();
    for (const f of schedule) {
      timers.add(
        setTimeout(() => {
          const s = standins[f.upstream]!;
          log(`${Math.round(now() / 1000)} s: ${f.kind}${f.kind === 'reload' ? ' the proxy' : ` api-${f.upstream}`}`);
          if (f.kind === 'reload') proxy!.kill('SIGHUP');
          else if (f.kind === 'kill') {
            void s.kill().then(() => timers.add(setTimeout(() => void s.start().catch(() => undefined), f.forMs)));
          } else if (f.kind === 'hang') {
            s.signal('SIGSTOP');
            timers.add(setTimeout(() => s.signal('SIGCONT'), f.forMs));
          } else {
            // kube-apiserver restarted (an upgrade): /readyz 503 for the shutdown delay, a
            // graceful stop, back half a delay later.
            void s.shutdown(f.forMs).then(() => timers.add(setTimeout(() => void s.start().catch(() => undefined), f.forMs / 2)));
          }
        }, f.atMs),
      );
    }
    await sleep(o.durationMs);
    loadOn = false;
    oneShot.destroy();
    keepAlive.destroy();
    log(`load over; idle for ${o.afterMs / 1000} s`);
    await sleep(o.afterMs);
    clearInterval(sampleTimer);
    samples.push(await sample(servingPid(), now(), adminPort));
    const afterLoad = samples[samples.length - 1]!;
    clearInterval(sampleTimer);
    const during = samples.filter((s) => s.tMs >= 0 && s.tMs <= o.durationMs);
    const peak = during.reduce((a, b) => (b.rssBytes > a.rssBytes ? b : a), atRest);
    const slopes = (list: MemorySample[]) => ({
      rssBytes: slopePer10Min(list, 'rssBytes'),
      anonBytes: slopePer10Min(list, 'anonBytes'),
      fds: slopePer10Min(list, 'fds'),
    });
    const { kubeward: _k, log: _l, node: _n, standinMain: _m, ...settings } = o;
    return {
      settings,
      faults: schedule,
      loadStartedAt: new Date(loadStartedAt).toISOString(),
      samples,
      atRest,
      peak,
      afterLoad,
      slopes: { whole: slopes(during), secondHalf: slopes(secondHalf(during, o.durationMs)) },
      requests,
      watches,
      failures,
      proxyAlive: proxy.exitCode === null && proxy.signalCode === null,
    };
  } finally {
    for (const t of timers) clearTimeout(t);
    if (proxy && proxy.exitCode === null) {
      const exited = new Promise((r) => proxy!.once('exit', r));
      proxy.kill('SIGTERM');
      await Promise.race([exited, sleep(5000)]);
      if (proxy.exitCode === null) proxy.kill('SIGKILL');
    }
    for (const s of standins) await s.kill();
    await ca.close();
  }
}

/** The report as a few lines of text. */
export function renderSoak(r: SoakReport): string {
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  const mibOr = (b: number | undefined) => (b === undefined ? '?' : mib(b));
  const lines = [
    `soak: ${r.settings.durationMs / 1000} s of load, a fault every ${r.settings.periodMs / 1000} s (${r.faults.length} faults)`,
    `| | RSS MiB | private MiB | file-backed MiB (Node binary, libraries) | fds |`,
    `| --- | --- | --- | --- | --- |`,
    `| at rest | ${mib(r.atRest.rssBytes)} | ${mib(r.atRest.anonBytes)} | ${mibOr(r.atRest.fileBytes)} | ${r.atRest.fds} |`,
    `| peak under load | ${mib(r.peak.rssBytes)} | ${mib(r.peak.anonBytes)} | ${mibOr(r.peak.fileBytes)} | ${r.peak.fds} |`,
    `| after load (${r.settings.afterMs / 1000} s idle) | ${mib(r.afterLoad.rssBytes)} | ${mib(r.afterLoad.anonBytes)} | ${mibOr(r.afterLoad.fileBytes)} | ${r.afterLoad.fds} |`,
    `| after load / at rest | ${(r.afterLoad.rssBytes / r.atRest.rssBytes).toFixed(2)} | ${(r.afterLoad.anonBytes / r.atRest.anonBytes).toFixed(2)} | ${r.afterLoad.fileBytes !== undefined && r.atRest.fileBytes ? (r.afterLoad.fileBytes / r.atRest.fileBytes).toFixed(2) : '?'} | |`,
    `| slope per 10 min, whole load | ${mib(r.slopes.whole.rssBytes)} | ${mib(r.slopes.whole.anonBytes)} | | ${r.slopes.whole.fds.toFixed(1)} |`,
    `| slope per 10 min, second half | ${mib(r.slopes.secondHalf.rssBytes)} | ${mib(r.slopes.secondHalf.anonBytes)} | | ${r.slopes.secondHalf.fds.toFixed(1)} |`,
    '',
    `| private memory, MiB | V8 heap committed | V8 heap used | external (Buffers, slabs) | the rest (malloc: libuv, OpenSSL, the C relay, V8 code) |`,
    `| --- | --- | --- | --- | --- |`,
    ...(
      [
        ['at rest', r.atRest],
        ['peak under load', r.peak],
        ['after load', r.afterLoad],
      ] as const
    ).map(
      ([name, x]) =>
        `| ${name} | ${mibOr(x.heapTotalBytes)} | ${mibOr(x.heapUsedBytes)} | ${mibOr(x.externalBytes)} | ${x.heapTotalBytes === undefined ? '?' : mib(x.anonBytes - x.heapTotalBytes - (x.externalBytes ?? 0))} |`,
    ),
    '',
    `| fault in force | requests | failed | retried as client-go would |`,
    `| --- | --- | --- | --- |`,
    ...Object.entries(r.requests).map(([k, c]) => `| ${k} | ${c.sent} | ${c.failed} | ${c.retried} |`),
    ...Object.entries(r.requests).flatMap(([k, c]) => c.examples.map((e) => `- ${k}: ${e}`)),
    '',
    ...renderFailures(r.failures),
    `watches opened ${r.watches.opened}, cut ${r.watches.cut}; proxy ${r.proxyAlive ? 'alive' : 'DEAD'} at the end`,
  ];
  return lines.join('\n');
}

/** Failed requests grouped by fault, client kind, reuse and error, with when they came after the fault's start. */
function renderFailures(failures: readonly FailedRequest[]): string[] {
  if (failures.length === 0) return [];
  const groups = new Map<string, FailedRequest[]>();
  for (const f of failures) {
    const key = `| ${f.fault} | ${f.client}${f.reused ? ' (reused)' : ''} | ${f.error} |`;
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  const s = (ms: number | undefined) => (ms === undefined ? '-' : (ms / 1000).toFixed(1));
  return [
    `| fault | client | error | failed | seconds after the fault's start |`,
    `| --- | --- | --- | --- | --- |`,
    ...[...groups].map(([key, list]) => `${key} ${list.length} | ${[...new Set(list.map((f) => s(f.sinceFaultMs)))].slice(0, 12).join(', ')} |`),
    '',
  ];
}

export const STANDIN_MAIN = join(import.meta.dirname, '../../testkit/apiserver-standin-main.ts');
