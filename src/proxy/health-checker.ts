// Active health checks: one loop per upstream, so a hung upstream never delays the others' checks.
// Each loop probes every interval (start to start, jittered ±10%), never two probes at once.
import { jitter, type Clock } from '../base/clock.ts';
import { describeError } from '../base/errors.ts';
import { probeJudgingStall } from '../probe/loop-stall.ts';
import { failedProbe, type ProbeResult } from '../probe/probe-result.ts';

export type ProbeFn = (upstreamKey: string, signal: AbortSignal) => Promise<ProbeResult>;

export interface HealthCheckerOptions {
  intervalMs: number;
  probe: ProbeFn;
  onResult: (upstreamKey: string, result: ProbeResult) => void;
  clock: Clock;
  random?: () => number;
}

export class HealthChecker {
  readonly #opts: HealthCheckerOptions;
  readonly #loops = new Map<string, { abort: AbortController; done: Promise<void> }>();

  constructor(opts: HealthCheckerOptions) {
    this.#opts = { ...opts };
  }

  /** A new interval, used from each loop's next wait on (a reload). */
  setInterval(intervalMs: number): void {
    this.#opts.intervalMs = intervalMs;
  }

  /** Starts loops for new upstreams and stops those of removed ones. */
  sync(upstreamKeys: readonly string[]): void {
    const wanted = new Set(upstreamKeys);
    for (const [key, loop] of this.#loops) {
      if (!wanted.has(key)) {
        loop.abort.abort();
        this.#loops.delete(key);
      }
    }
    for (const key of wanted) {
      if (this.#loops.has(key)) continue;
      const abort = new AbortController();
      this.#loops.set(key, { abort, done: this.#run(key, abort.signal) });
    }
  }

  async close(): Promise<void> {
    const loops = [...this.#loops.values()];
    this.#loops.clear();
    for (const l of loops) l.abort.abort();
    await Promise.all(loops.map((l) => l.done));
  }

  async #run(key: string, signal: AbortSignal): Promise<void> {
    const { clock, probe, onResult, random } = this.#opts;
    while (!signal.aborted) {
      const { intervalMs } = this.#opts;
      const started = clock.now();
      // A timeout our own stalled loop caused is ours, not the upstream's.
      const result = await probeJudgingStall(() =>
        probe(key, signal).catch((err: unknown) => failedProbe('local', 0, `the check threw: ${describeError(err)}`)),
      );
      if (signal.aborted) return;
      onResult(key, result);
      const wait = Math.max(0, jitter(intervalMs, 0.1, random) - (clock.now() - started));
      try {
        await clock.sleep(wait, signal);
      } catch {
        return;
      }
    }
  }
}
