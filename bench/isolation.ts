// The keep-alive latency of one peer under a placement (bench/placement.ts) and with the open-loop
// generator (bench/openloop.c): the variants that tell the proxy's p99 apart from how the scheduler
// shares two cores between wrk, the backend and the proxy. Used by npm run bench (--placement,
// --open-loop) and bench/placement-ab.ts. Metric keys are "<placement>:<metric>".
import { cpus as osCpus } from 'node:os';
import { readWindow, windowShares } from './cpu-window.ts';
import { measureWrk, runWrk, type LoadSettings } from './measure-perf.ts';
import { runOpenloop, type Arrivals } from './openloop.ts';
import { checkPinned, cpuSets, pinProcess, pinTree, type Placement } from './placement.ts';
import { readTreeUsage } from './proc-stats.ts';
import type { MetricSpec } from './render-table.ts';

export interface VariantSettings {
  /** wrk at saturation and wrk paced (the bench's two keep-alive loads) under the placement. */
  wrk: boolean;
  saturated: LoadSettings;
  paced: LoadSettings;
  /** Open-loop rates (requests/s over all connections); none without a built generator. */
  openloopRates: readonly number[];
  openloopBin?: string;
  openloopConnections: number;
  /** Each open-loop window lasts this long, or longer at a low rate until it holds openloopMinRequests (a p99 of 40 or more). */
  openloopDurationS: number;
  openloopMinRequests: number;
  arrivals: Arrivals;
}

export interface VariantTarget {
  /** The port the load goes to (the proxy's, or the backend's for direct). */
  port: number;
  /** The proxy's pid; undefined for direct. */
  proxyPid?: number;
  backendPid: number;
}

const cores = osCpus().length;

/** Puts the proxy, the backend and this process where the placement says; checks the proxy's threads when pinned. */
export async function place(t: VariantTarget, placement: Placement): Promise<void> {
  const sets = cpuSets(placement, cores);
  await pinProcess(process.pid, sets.load);
  await pinTree(t.backendPid, sets.load);
  if (t.proxyPid !== undefined) await pinTree(t.proxyPid, sets.proxy);
  if (placement === 'pinned' && t.proxyPid !== undefined) checkPinned(t.proxyPid, sets.proxy);
}

export async function measureVariant(t: VariantTarget, placement: Placement, s: VariantSettings, seed: number): Promise<Record<string, number>> {
  const sets = cpuSets(placement, cores);
  const load = placement === 'pinned' ? sets.load : undefined;
  const url = `http://127.0.0.1:${t.port}/`;
  const out: Record<string, number> = {};
  const key = (k: string): string => `${placement}:${k}`;
  await place(t, placement);
  try {
    // Warm-up in this placement (JIT, buffers; the proxy's caches on its core).
    await runWrk(url, { ...s.saturated, durationS: 1, cpus: load });
    if (s.wrk) {
      const before = readWindow(process.pid);
      const ka = await measureWrk(url, t.proxyPid, { ...s.saturated, cpus: load });
      const { busy, foreignPct, irqPct } = windowShares(before, readWindow(process.pid));
      Object.assign(out, { [key('kaForeignPct')]: foreignPct, [key('kaIrqPct')]: irqPct });
      Object.assign(out, {
        [key('kaRps')]: ka.wrk.requestsPerSec,
        [key('kaP50Ms')]: ka.wrk.p50Ms,
        [key('kaP99Ms')]: ka.wrk.p99Ms,
        [key('kaErrors')]: ka.wrk.socketErrors + ka.wrk.badResponses,
      });
      for (const [cpu, share] of busy) out[key(`kaCpu${cpu}Busy`)] = share * 100;
      if (ka.cpuUsPerRequest !== undefined) out[key('kaCpuUsPerReq')] = ka.cpuUsPerRequest;
      const kpBefore = readWindow(process.pid);
      const kp = await measureWrk(url, t.proxyPid, { ...s.paced, cpus: load });
      out[key('kpForeignPct')] = windowShares(kpBefore, readWindow(process.pid)).foreignPct;
      Object.assign(out, {
        [key('kpRps')]: kp.wrk.requestsPerSec,
        [key('kpP50Ms')]: kp.wrk.p50Ms,
        [key('kpP99Ms')]: kp.wrk.p99Ms,
        [key('kpErrors')]: kp.wrk.socketErrors + kp.wrk.badResponses,
      });
      if (kp.cpuUsPerRequest !== undefined) out[key('kpCpuUsPerReq')] = kp.cpuUsPerRequest;
    }
    if (s.openloopBin !== undefined) {
      for (const rate of s.openloopRates) {
        const durationS = Math.max(s.openloopDurationS, Math.ceil(s.openloopMinRequests / rate));
        const cpuBefore = t.proxyPid === undefined ? undefined : readTreeUsage(t.proxyPid).cpuSeconds;
        const olBefore = readWindow(process.pid);
        const r = await runOpenloop(s.openloopBin, {
          port: t.port,
          connections: s.openloopConnections,
          rate,
          durationS,
          warmupS: 0.5,
          arrivals: s.arrivals,
          seed: seed + rate,
          cpus: load,
        });
        const ol = `ol${rate}`;
        out[key(`${ol}ForeignPct`)] = windowShares(olBefore, readWindow(process.pid)).foreignPct;
        Object.assign(out, {
          [key(`${ol}P50Ms`)]: r.latP50Us / 1000,
          [key(`${ol}P90Ms`)]: r.latP90Us / 1000,
          [key(`${ol}P99Ms`)]: r.latP99Us / 1000,
          [key(`${ol}P999Ms`)]: r.latP999Us / 1000,
          [key(`${ol}SvcP99Ms`)]: r.svcP99Us / 1000,
          [key(`${ol}LagP99Us`)]: r.lagP99Us,
          [key(`${ol}Queued`)]: r.queued,
          [key(`${ol}Errors`)]: r.errors,
          [key(`${ol}Rps`)]: r.requests / durationS,
        });
        if (cpuBefore !== undefined && r.requests > 0) {
          // The warm-up's requests run on the proxy too: CPU per request counts every request sent.
          out[key(`${ol}CpuUsPerReq`)] = ((readTreeUsage(t.proxyPid!).cpuSeconds - cpuBefore) * 1e6) / (r.requests * (1 + 0.5 / durationS));
        }
      }
    }
  } finally {
    await place(t, 'shared');
  }
  return out;
}

const PLACE_LABEL: Record<Placement, string> = {
  shared: 'shared (no affinity)',
  pinned: 'pinned (proxy on CPU 1; wrk or openloop and backend on CPU 0)',
};

/** Table rows for the variant metrics measured (keys as measureVariant writes them). */
export function variantMetrics(
  placements: readonly Placement[],
  s: Pick<VariantSettings, 'wrk' | 'openloopRates' | 'arrivals' | 'openloopConnections'>,
): MetricSpec[] {
  const out: MetricSpec[] = [];
  for (const p of placements) {
    const where = PLACE_LABEL[p];
    if (s.wrk) {
      out.push(
        { key: `${p}:kaRps`, label: `keep-alive requests/s, ${where}`, digits: 0 },
        { key: `${p}:kaP50Ms`, label: `keep-alive p50 (ms), ${where}`, digits: 2 },
        { key: `${p}:kaP99Ms`, label: `keep-alive p99 (ms), ${where}`, digits: 2 },
        { key: `${p}:kaCpuUsPerReq`, label: `proxy CPU per keep-alive request (µs), ${where}`, digits: 1, proxyOnly: true },
        { key: `${p}:kaCpu0Busy`, label: `CPU 0 busy at saturation (%), ${where}`, digits: 0, noRatio: true },
        { key: `${p}:kaCpu1Busy`, label: `CPU 1 busy at saturation (%), ${where}`, digits: 0, noRatio: true },
        { key: `${p}:kaForeignPct`, label: `other processes' CPU at saturation (% of one CPU), ${where}`, digits: 0, noRatio: true },
        { key: `${p}:kaIrqPct`, label: `irq + softirq at saturation (% of one CPU), ${where}`, digits: 0, noRatio: true },
        { key: `${p}:kpP50Ms`, label: `paced (wrk) p50 (ms), ${where}`, digits: 2 },
        { key: `${p}:kpP99Ms`, label: `paced (wrk) p99 (ms), ${where}`, digits: 2 },
        { key: `${p}:kpCpuUsPerReq`, label: `proxy CPU per paced (wrk) request (µs), ${where}`, digits: 1, proxyOnly: true },
        { key: `${p}:kpForeignPct`, label: `other processes' CPU, paced (wrk) (% of one CPU), ${where}`, digits: 0, noRatio: true },
      );
    }
    for (const rate of s.openloopRates) {
      const gen = `open loop ${rate}/s (${s.arrivals}, ${s.openloopConnections} conns)`;
      out.push(
        { key: `${p}:ol${rate}P50Ms`, label: `${gen} p50 from intended send (ms), ${where}`, digits: 3 },
        { key: `${p}:ol${rate}P90Ms`, label: `${gen} p90 from intended send (ms), ${where}`, digits: 3 },
        { key: `${p}:ol${rate}P99Ms`, label: `${gen} p99 from intended send (ms), ${where}`, digits: 3 },
        { key: `${p}:ol${rate}SvcP99Ms`, label: `${gen} p99 from real send (ms), ${where}`, digits: 3 },
        { key: `${p}:ol${rate}LagP99Us`, label: `${gen} generator's send lag p99 (µs), ${where}`, digits: 0, noRatio: true },
        { key: `${p}:ol${rate}CpuUsPerReq`, label: `proxy CPU per ${gen} request (µs), ${where}`, digits: 1, proxyOnly: true },
        { key: `${p}:ol${rate}ForeignPct`, label: `other processes' CPU, ${gen} (% of one CPU), ${where}`, digits: 0, noRatio: true },
      );
    }
  }
  return out;
}
