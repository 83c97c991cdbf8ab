// Reads the text wrk 4 prints (run with --latency) into numbers. Pure; throws on output it cannot read.

export interface WrkResult {
  requests: number;
  durationS: number;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Connect, read, write and timeout socket errors added up. */
  socketErrors: number;
  /** Responses that were not 2xx or 3xx. */
  badResponses: number;
}

const TIME_UNITS_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "1.23ms" → 1.23, "456.78us" → 0.45678, "2.00s" → 2000. */
export function parseWrkTime(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m|h)$/.exec(text.trim());
  if (!m) throw new Error(`wrk: cannot read a time from "${text}"`);
  return Number(m[1]) * (TIME_UNITS_MS[m[2] as string] as number);
}

export function parseWrkOutput(text: string): WrkResult {
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m|h),/.exec(text);
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(text);
  const p50 = /^\s*50(?:\.0+)?%\s+(\S+)/m.exec(text);
  const p99 = /^\s*99(?:\.0+)?%\s+(\S+)/m.exec(text);
  if (!total || !rate || !p50 || !p99) {
    throw new Error(`wrk: unexpected output (was --latency given?): ${text.slice(0, 300)}`);
  }
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const bad = /Non-2xx or 3xx responses: (\d+)/.exec(text);
  return {
    requests: Number(total[1]),
    durationS: parseWrkTime(`${total[2]}${total[3]}`) / 1000,
    requestsPerSec: Number(rate[1]),
    p50Ms: parseWrkTime(p50[1] as string),
    p99Ms: parseWrkTime(p99[1] as string),
    socketErrors: errors ? errors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    badResponses: bad ? Number(bad[1]) : 0,
  };
}
