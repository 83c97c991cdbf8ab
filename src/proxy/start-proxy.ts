// Starts a proxy in-process from a typed config: the entry point for the CLI mode and for callers
// such as the demo. Returns a handle with readiness, status, stats, admin routes and close().
import { networkInterfaces } from 'node:os';
import { Registry } from 'prom-client';
import { systemClock, type Clock } from '../base/clock.ts';
import { createSilentLogger, type Logger } from '../base/logger.ts';
import { once } from '../base/lifecycle.ts';
import type { AdminRoute, Readiness } from '../admin/admin-server.ts';
import { formatHostPort, type HostPort } from '../config/fields.ts';
import { Frontend } from './frontend.ts';
import { proxyAdminRoutes } from './proxy-admin-routes.ts';
import { loadHealthCheck, type ProxyConfig } from './proxy-config.ts';
import { ProxyMetrics } from './proxy-metrics.ts';
import { proxyReadiness, proxyStats, proxyStatus, type FrontendStats, type FrontendView } from './proxy-status.ts';

export interface StartProxyOptions {
  log?: Logger;
  /** The process registry; a private one when absent (in-process callers that do not scrape). */
  registry?: Registry;
  clock?: Clock;
  random?: () => number;
}

export interface ProxyHandle {
  /** Bound listen addresses by frontend name (port 0 resolved). */
  readonly addresses: ReadonlyMap<string, readonly HostPort[]>;
  readiness(): Readiness;
  status(): ReturnType<typeof proxyStatus>;
  stats(): FrontendStats[];
  readonly adminRoutes: AdminRoute[];
  setDrained(frontend: string, upstream: string, drained: boolean): { closing: number } | 'no-frontend' | 'no-upstream';
  /** Graceful: stop accepting, let connections finish for up to shutdownGrace, close the rest. Idempotent. */
  close(): Promise<void>;
  /** Abortive: everything now. */
  destroy(): void;
}

export async function startProxy(config: ProxyConfig, opts: StartProxyOptions = {}): Promise<ProxyHandle> {
  const log = opts.log ?? createSilentLogger();
  const frontends: Frontend[] = [];
  const metrics = new ProxyMetrics(opts.registry ?? new Registry(), () => frontends.map((f) => f.sample()));
  const local = localHostTest();
  const deps = { log, metrics, clock: opts.clock ?? systemClock, random: opts.random ?? Math.random, isLocal: local };
  try {
    for (const fc of config.frontends) {
      const f = new Frontend(fc, await loadHealthCheck(fc), deps);
      frontends.push(f);
      await f.start();
      log.info({ frontend: f.name, listen: f.addresses.map(formatHostPort), upstreams: fc.upstreams.map(formatHostPort), check: fc.healthCheck.type }, 'frontend listening');
    }
  } catch (err) {
    for (const f of frontends) f.destroy();
    throw err;
  }
  const views = (): FrontendView[] =>
    frontends.map((f) => ({
      name: f.name,
      listen: f.addresses,
      counters: f.counters,
      upstreams: f.list.all(),
      connections: (key) => {
        const b = f.conns.bytesFor(key);
        return { established: f.conns.countFor(key), total: f.conns.totalFor(key), bytesToUpstream: b.toUpstream, bytesToClient: b.toClient };
      },
    }));
  const setDrained: ProxyHandle['setDrained'] = (name, upstream, drained) => {
    const f = frontends.find((x) => x.name === name);
    if (!f) return 'no-frontend';
    return f.setDrained(upstream, drained) ?? 'no-upstream';
  };
  return {
    addresses: new Map(frontends.map((f) => [f.name, f.addresses])),
    readiness: () => proxyReadiness(views()),
    status: () => proxyStatus(views(), formatHostPort),
    stats: () => proxyStats(views()),
    adminRoutes: proxyAdminRoutes(setDrained),
    setDrained,
    close: once(async () => {
      log.info({ graceMs: config.shutdownGraceMs }, 'proxy closing: no new connections, waiting for open ones');
      await Promise.all(frontends.map((f) => f.close(config.shutdownGraceMs)));
    }),
    destroy: () => {
      for (const f of frontends) f.destroy();
    },
  };
}

/** Loopback, localhost, or an address of one of this node's interfaces (read once at start). */
function localHostTest(): (host: string) => boolean {
  const own = new Set(Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address)));
  return (host) => host === 'localhost' || host.startsWith('127.') || host === '::1' || own.has(host);
}
