// The operator benchmark's options, checked (pure): each bad value gives one line naming the flag
// and a valid example; the caller prints it and exits 2.
import { parseDuration } from '../../src/base/duration.ts';

export interface BenchOptions {
  /** Distinct, ascending. */
  sizes: number[];
  durationS: number;
  intervalMs: number;
  out: string;
  concurrency: number;
}

export interface RawBenchOptions {
  sizes: string;
  duration: string;
  interval: string;
  out: string;
  concurrency: string;
}

const WHOLE = /^\d{1,6}$/;

export function checkBenchOptions(raw: RawBenchOptions): BenchOptions | { error: string } {
  const parts = raw.sizes.split(',').map((s) => s.trim());
  const sizes = parts.map(Number);
  if (parts.some((p) => !WHOLE.test(p)) || sizes.some((n) => n < 1 || n > 5000))
    return { error: '--sizes must be whole numbers from 1 to 5000, comma-separated, e.g. --sizes 10,100' };
  const durationS = Number(raw.duration);
  if (!WHOLE.test(raw.duration) || durationS < 20 || durationS > 1800)
    return { error: '--duration must be whole seconds from 20 to 1800, e.g. --duration 150' };
  const intervalMs = parseDuration(raw.interval);
  if (intervalMs === undefined || intervalMs < 1000 || intervalMs > 3_600_000)
    return { error: '--interval must be a duration from 1s to 1h, e.g. --interval 30s' };
  const concurrency = Number(raw.concurrency);
  if (!WHOLE.test(raw.concurrency) || concurrency < 1 || concurrency > 64)
    return { error: '--concurrency must be a whole number from 1 to 64, e.g. --concurrency 16' };
  if (raw.out === '' || raw.out.includes('\0')) return { error: '--out must name a directory, e.g. --out bench/results' };
  return { sizes: [...new Set(sizes)].sort((a, b) => a - b), durationS, intervalMs, out: raw.out, concurrency };
}
