// The operator's event-loop delay, for the dashboards and the operator bench: how long a timer or
// an I/O callback waited behind other work (a cycle's JSON parse, a burst of first cycles). The
// names and the reset at each scrape are those of prom-client's default metrics
// (lib/metrics/eventLoopLag.js: monitorEventLoopDelay, nanoseconds to seconds, reset after reading),
// so each scrape covers the time since the one before. Only the operator registers these: the node
// modes (proxy, watch, routes, agent) do not load perf_hooks nor keep its sampling timer (footprint).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Gauge, type Registry } from '../../admin/metrics.ts';

type IntervalHistogram = ReturnType<typeof monitorEventLoopDelay>;

/** prom-client's default resolution: the loop is sampled every 10 ms. */
const RESOLUTION_MS = 10;

export interface EventLoopMetrics {
  /** Stops sampling (the daemon's stop; tests). */
  stop(): void;
}

/** The figures of one scrape, in seconds; all zero when the histogram saw no sample since the last. */
export function eventLoopFigures(h: Pick<IntervalHistogram, 'count' | 'min' | 'max' | 'mean' | 'stddev' | 'percentile'>): Record<string, number> {
  if (h.count === 0) return { min: 0, max: 0, mean: 0, stddev: 0, p50: 0, p90: 0, p99: 0 };
  const s = (ns: number) => (Number.isFinite(ns) ? ns / 1e9 : 0);
  return {
    min: s(h.min),
    max: s(h.max),
    mean: s(h.mean),
    stddev: s(h.stddev),
    p50: s(h.percentile(50)),
    p90: s(h.percentile(90)),
    p99: s(h.percentile(99)),
  };
}

export function registerEventLoopMetrics(registry: Registry, prefix = 'kubeward_'): EventLoopMetrics {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  const registers = [registry];
  const gauges: Record<string, Gauge> = {};
  const what: Record<string, string> = {
    min: 'The minimum',
    max: 'The maximum',
    mean: 'The mean',
    stddev: 'The standard deviation of the',
    p50: 'The 50th percentile of the',
    p90: 'The 90th percentile of the',
    p99: 'The 99th percentile of the',
  };
  // Registered first: its collect reads and resets the histogram and sets every gauge of the group.
  new Gauge({
    name: `${prefix}nodejs_eventloop_lag_min_seconds`,
    help: `${what.min} recorded event loop delay since the last scrape.`,
    registers,
    collect() {
      const f = eventLoopFigures(histogram);
      histogram.reset();
      this.set(f.min!);
      for (const [k, g] of Object.entries(gauges)) g.set(f[k]!);
    },
  });
  for (const k of ['max', 'mean', 'stddev', 'p50', 'p90', 'p99']) {
    gauges[k] = new Gauge({
      name: `${prefix}nodejs_eventloop_lag_${k}_seconds`,
      help: `${what[k]} recorded event loop delay since the last scrape.`,
      registers,
    });
  }
  return { stop: () => histogram.disable() };
}
