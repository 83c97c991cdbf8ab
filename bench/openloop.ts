// The open-loop paced load (bench/openloop.c): compiled with cc into the run's directory, run
// against a URL's port, and its one-line summary parsed. Pure parsing apart from build and run.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SOURCE = new URL('openloop.c', import.meta.url).pathname;

export type Arrivals = 'poisson' | 'even';

export interface OpenloopSettings {
  port: number;
  connections: number;
  /** Requests per second over all connections. */
  rate: number;
  durationS: number;
  /** Requests intended before this many seconds are sent but not counted. */
  warmupS: number;
  arrivals: Arrivals;
  seed: number;
  /** taskset CPU list for the generator (pinned placement); unset: wherever the scheduler puts it. */
  cpus?: string;
}

/** openloop's summary: counts, and times in microseconds (-1 when there was nothing to measure). */
export interface OpenloopResult {
  requests: number;
  sent: number;
  errors: number;
  /** Requests whose connection was still busy at their intended time (they waited, and that wait is in lat). */
  queued: number;
  connections: number;
  rate: number;
  durationS: number;
  arrivals: Arrivals;
  /** From the intended send time to the end of the response. */
  latP50Us: number;
  latP90Us: number;
  latP99Us: number;
  latP999Us: number;
  latMaxUs: number;
  /** From the real send (write) to the end of the response. */
  svcP50Us: number;
  svcP99Us: number;
  /** How late the generator sent a request whose connection was free: its own timing error. */
  lagP50Us: number;
  lagP99Us: number;
  lagMaxUs: number;
}

const FIELDS: ReadonlyArray<[keyof OpenloopResult, string]> = [
  ['requests', 'requests'],
  ['sent', 'sent'],
  ['errors', 'errors'],
  ['queued', 'queued'],
  ['connections', 'connections'],
  ['rate', 'rate'],
  ['durationS', 'duration_s'],
  ['latP50Us', 'lat_p50_us'],
  ['latP90Us', 'lat_p90_us'],
  ['latP99Us', 'lat_p99_us'],
  ['latP999Us', 'lat_p999_us'],
  ['latMaxUs', 'lat_max_us'],
  ['svcP50Us', 'svc_p50_us'],
  ['svcP99Us', 'svc_p99_us'],
  ['lagP50Us', 'lag_p50_us'],
  ['lagP99Us', 'lag_p99_us'],
  ['lagMaxUs', 'lag_max_us'],
];

/** The summary line ("openloop key=value ..."); throws naming the first key that is missing or not a number. */
export function parseOpenloop(text: string): OpenloopResult {
  const line = text.split('\n').find((l) => l.startsWith('openloop '));
  if (line === undefined) throw new Error(`openloop: no summary line in its output: ${JSON.stringify(text.slice(0, 200))}`);
  const pairs = new Map<string, string>();
  for (const word of line.split(' ').slice(1)) {
    const eq = word.indexOf('=');
    if (eq > 0) pairs.set(word.slice(0, eq), word.slice(eq + 1));
  }
  const arrivals = pairs.get('arrivals');
  if (arrivals !== 'poisson' && arrivals !== 'even') throw new Error(`openloop: arrivals "${arrivals}" is neither poisson nor even`);
  const out: Partial<OpenloopResult> = { arrivals };
  for (const [key, name] of FIELDS) {
    const raw = pairs.get(name);
    const value = raw === undefined || !/^-?\d+(\.\d+)?$/.test(raw) ? NaN : Number(raw);
    if (!Number.isFinite(value)) throw new Error(`openloop: ${name} is ${raw === undefined ? 'missing' : `"${raw}", not a number`}`);
    (out as Record<string, unknown>)[key] = value;
  }
  return out as OpenloopResult;
}

/** The inverse of parseOpenloop (what openloop.c prints), for tests. */
export function renderOpenloop(r: OpenloopResult): string {
  const words = FIELDS.map(([key, name]) => `${name}=${String(r[key])}`);
  words.splice(7, 0, `arrivals=${r.arrivals}`);
  return `openloop ${words.join(' ')}\n`;
}

/** "6000,500" → [6000, 500]; "" → none. Whole requests per second from 1 to 1,000,000. */
export function parseRates(text: string): number[] {
  if (text.trim() === '') return [];
  return text.split(',').map((w) => {
    const n = Number(w.trim());
    if (!/^\d+$/.test(w.trim()) || !Number.isInteger(n) || n < 1 || n > 1_000_000)
      throw new Error(`"${w}" is not a whole number of requests/s from 1 to 1000000`);
    return n;
  });
}

export function parseArrivals(text: string): Arrivals {
  if (text !== 'poisson' && text !== 'even') throw new Error(`"${text}" is neither poisson nor even`);
  return text;
}

/** Why openloop cannot be built here (no C compiler), or undefined. */
export async function openloopMissing(): Promise<string | undefined> {
  try {
    await run('sh', ['-c', 'command -v cc']);
    return undefined;
  } catch {
    return 'no C compiler (cc) to build bench/openloop.c; Debian: apt-get install gcc libc6-dev';
  }
}

/** Compiles bench/openloop.c into dir; returns the binary's path. */
export async function buildOpenloop(dir: string): Promise<string> {
  const bin = join(dir, 'openloop');
  await run('cc', ['-O2', '-Wall', '-o', bin, SOURCE, '-lm'], { timeout: 60_000 });
  return bin;
}

/** One open-loop window against 127.0.0.1:port; hard-killed 20 s past its duration. */
export async function runOpenloop(bin: string, s: OpenloopSettings): Promise<OpenloopResult> {
  const args = ['127.0.0.1', String(s.port), String(s.connections), String(s.rate), String(s.durationS), String(s.warmupS), s.arrivals, String(s.seed)];
  const [cmd, argv] = s.cpus === undefined ? [bin, args] : ['taskset', ['-c', s.cpus, bin, ...args]];
  const { stdout } = await run(cmd, argv, { timeout: (s.durationS + s.warmupS + 20) * 1000, killSignal: 'SIGKILL' });
  return parseOpenloop(stdout);
}
