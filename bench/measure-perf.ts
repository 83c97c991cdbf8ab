// The four load measurements of one peer in one round: keep-alive rate and latency, new-connection
// rate, bulk throughput (all with the proxy's CPU time), and memory per idle connection.
import { execFile } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { waitFor } from '../testkit/wait-for.ts';
import { parseWrkOutput, type WrkResult } from './parse-wrk.ts';
import { readMachineTicks, readTreeMemory, readTreeUsage, stealPercent, type TreeMemory } from './proc-stats.ts';
import { median } from './bench-stats.ts';

const run = promisify(execFile);

export interface LoadSettings {
  durationS: number;
  connections: number;
  threads: number;
  /**
   * A wrk Lua script (pacedScript) that makes each connection wait a while after a response before
   * its next request: an open rate far below saturation instead of as fast as possible.
   */
  script?: string;
}

/**
 * The wrk script that paces every connection: `delay()` is wrk's hook for the milliseconds to wait
 * before a connection sends its next request; latency is still timed from the request's send. The
 * wait is drawn uniformly from 0 to twice the mean. A fixed wait keeps all connections in step
 * (they start together and see the same latency), so the proxy would get every connection's
 * request at once every mean ms and the p99 would be the time to drain such a burst of 64: with a
 * fixed 10 ms, every peer's p50 was 0.5-0.7 ms; with random waits it is 0.13-0.16 ms. Real clients
 * of an apiserver are not in step.
 */
export function pacedScript(meanMs: number): string {
  if (!Number.isInteger(meanMs) || meanMs < 1 || meanMs > 1000) throw new Error(`pacing: ${meanMs} ms is not a whole number from 1 to 1000`);
  return `function delay()\n  return math.random(0, ${2 * meanMs})\nend\n`;
}

/** wrk against url; hard-killed if it runs 20 s past its duration. */
export async function runWrk(url: string, s: LoadSettings, headers: readonly string[] = []): Promise<WrkResult> {
  const script = s.script === undefined ? [] : ['-s', s.script];
  const args = [`-t${s.threads}`, `-c${s.connections}`, `-d${s.durationS}s`, '--latency', ...script, ...headers.flatMap((h) => ['-H', h]), url];
  const { stdout } = await run('wrk', args, { timeout: (s.durationS + 20) * 1000, killSignal: 'SIGKILL' });
  return parseWrkOutput(stdout);
}

/**
 * wrk with the proxy's CPU time (its whole process tree) read before and after, and its memory
 * sampled every 250 ms while the load runs (the peak of each figure); pid undefined for direct.
 * stealPct: the share of the machine's CPU time the hypervisor gave to other guests meanwhile; on
 * a shared host it comes in bursts, and a p99 measured in one is the host's figure.
 */
export async function measureWrk(
  url: string,
  pid: number | undefined,
  s: LoadSettings,
  headers: readonly string[] = [],
): Promise<{ wrk: WrkResult; cpuUsPerRequest?: number; peakMemory?: TreeMemory; stealPct?: number }> {
  const machineBefore = readMachineTicks();
  const before = pid === undefined ? undefined : readTreeUsage(pid).cpuSeconds;
  const peak: TreeMemory = { rssBytes: 0, anonBytes: 0, pssBytes: 0 };
  const sample = (): void => {
    if (pid === undefined) return;
    const m = readTreeMemory(pid);
    peak.rssBytes = Math.max(peak.rssBytes, m.rssBytes);
    peak.anonBytes = Math.max(peak.anonBytes, m.anonBytes);
    peak.pssBytes = Math.max(peak.pssBytes, m.pssBytes);
  };
  const sampler = setInterval(sample, 250);
  let wrk: WrkResult;
  try {
    wrk = await runWrk(url, s, headers);
  } finally {
    clearInterval(sampler);
  }
  const stealPct = stealPercent(machineBefore, readMachineTicks());
  if (pid === undefined || before === undefined) return { wrk, stealPct };
  const cpu = readTreeUsage(pid).cpuSeconds - before;
  return { wrk, cpuUsPerRequest: wrk.requests > 0 ? (cpu * 1e6) / wrk.requests : undefined, peakMemory: peak, stealPct };
}

/** MB/s (10^6 bytes) over `times` sequential downloads of url with curl to /dev/null. */
export async function measureBulk(url: string, times: number): Promise<number> {
  let bytes = 0;
  let seconds = 0;
  for (let i = 0; i < times; i++) {
    const { stdout } = await run('curl', ['-sS', '--fail', '-o', '/dev/null', '--max-time', '60', '-w', '%{size_download} %{time_total}', url], {
      timeout: 70_000,
    });
    const [size, time] = stdout.trim().split(' ').map(Number);
    if (!size || !time) throw new Error(`curl: unexpected output "${stdout}"`);
    bytes += size;
    seconds += time;
  }
  return bytes / seconds / 1e6;
}

/** Established TCP connections whose local port is port (the backend's side), from ss. */
export async function establishedTo(port: number): Promise<number> {
  const { stdout } = await run('ss', ['-Htn', 'state', 'established', `( sport = :${port} )`], { maxBuffer: 64 * 1024 * 1024 });
  return stdout.split('\n').filter((l) => l.trim() !== '').length;
}

export interface IdleResult {
  /** RSS with the first fifth of the connections held (one-time costs paid). */
  warmRssBytes: number;
  heldRssBytes: number;
  /** What each further connection adds: the median over the steps of a fifth each, per connection. */
  bytesPerConnection: number;
}

/**
 * Opens `count` TCP connections through the proxy (batches of 250) in five steps and reads the
 * proxy tree's RSS after each (once the backend holds them all). The per-connection figure is the
 * median of the four steps after the first, per connection: one-time costs (code paths first run
 * and paged in) stay in the first step, and a heap that grows in jumps, or is collected, in one
 * step does not decide the figure. Then closes them.
 */
export async function measureIdle(proxyPort: number, backendPort: number, pid: number, count: number): Promise<IdleResult> {
  const base = await establishedTo(backendPort);
  const sockets: Socket[] = [];
  const holdUntil = async (n: number): Promise<number> => {
    while (sockets.length < n) {
      const batch = Array.from({ length: Math.min(250, n - sockets.length) }, () => openIdle(proxyPort));
      sockets.push(...(await Promise.all(batch)));
    }
    await waitFor(async () => (await establishedTo(backendPort)) >= base + n, { timeoutMs: 20_000, intervalMs: 200, what: `${n} connections at the backend` });
    await new Promise((r) => setTimeout(r, 1000)); // let lazily allocated buffers settle before reading RSS
    return readTreeUsage(pid).rssBytes;
  };
  try {
    const marks = [1, 2, 3, 4, 5].map((i) => Math.max(i, Math.floor((count * i) / 5)));
    const rss: number[] = [];
    for (const n of marks) rss.push(await holdUntil(n));
    const steps = marks.slice(1).map((n, i) => (rss[i + 1]! - rss[i]!) / Math.max(1, n - marks[i]!));
    return { warmRssBytes: rss[0]!, heldRssBytes: rss[4]!, bytesPerConnection: median(steps) ?? 0 };
  } finally {
    for (const s of sockets) s.destroy();
    await waitFor(async () => (await establishedTo(backendPort)) <= base, { timeoutMs: 20_000, intervalMs: 200, what: 'idle connections to close' }).catch(
      () => undefined,
    );
  }
}

function openIdle(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port });
    s.setTimeout(10_000, () => s.destroy(new Error('idle connection: connect timed out')));
    s.once('connect', () => {
      s.setTimeout(0);
      resolve(s);
    });
    s.once('error', reject);
  });
}
