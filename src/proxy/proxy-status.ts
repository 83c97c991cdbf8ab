// What /status and /readyz say, and the counters a caller (the demo) can poll: built from the
// frontends' upstream lists and counters. Pure.
import type { Readiness } from '../admin/admin-server.ts';
import type { HostPort } from '../config/fields.ts';
import type { FrontendCounters } from './frontend.ts';
import type { Upstream, UpstreamState } from './upstream-list.ts';

export interface FrontendView {
  name: string;
  listen: readonly HostPort[];
  counters: FrontendCounters;
  upstreams: readonly Upstream[];
  /** Discovery's state, for frontends that discover their upstreams. */
  discovery?: unknown;
  /** The checks' local fault streak, if one is on (reason local: the fault is this node's, not the upstreams'). */
  localFault?: { since: number; upstreams: string[]; detail: string };
  /** Most client connections held at once, and how many are open. */
  connectionCap?: number;
  openConnections?: number;
  /** Established connections and their totals, by upstream key. */
  connections: (key: string) => { established: number; total: number; bytesToUpstream: number; bytesToClient: number };
}

export interface UpstreamStats {
  upstream: string;
  state: UpstreamState;
  drained: boolean;
  active: number;
  total: number;
  bytesToUpstream: number;
  bytesToClient: number;
}

export interface FrontendStats extends FrontendCounters {
  name: string;
  active: number;
  upstreams: UpstreamStats[];
}

/**
 * Ready when every frontend has at least one upstream that is up and not drained. A local fault
 * does not change that (upstream states are kept through it) but is named in the reason.
 */
export function proxyReadiness(frontends: readonly FrontendView[]): Readiness {
  const without = frontends.filter((f) => !f.upstreams.some((u) => u.state === 'up' && !u.drained)).map((f) => f.name);
  const faults = frontends
    .filter((f) => f.localFault)
    .map((f) => `; local fault in the checks of "${f.name}": ${f.localFault!.detail}`)
    .join('');
  if (without.length === 0) return { ready: true, reason: `every frontend has a healthy upstream (${frontends.map((f) => f.name).join(', ')})${faults}` };
  return { ready: false, reason: `no healthy upstream for frontend ${without.map((n) => `"${n}"`).join(', ')}${faults}` };
}

export function proxyStats(frontends: readonly FrontendView[]): FrontendStats[] {
  return frontends.map((f) => {
    const upstreams = f.upstreams.map((u) => {
      const c = f.connections(u.key);
      return {
        upstream: u.key,
        state: u.state,
        drained: u.drained,
        active: u.active,
        total: c.total,
        bytesToUpstream: c.bytesToUpstream,
        bytesToClient: c.bytesToClient,
      };
    });
    return { name: f.name, ...f.counters, active: upstreams.reduce((n, u) => n + u.active, 0), upstreams };
  });
}

export function proxyStatus(frontends: readonly FrontendView[], formatAddress: (hp: HostPort) => string) {
  const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
  return {
    readiness: proxyReadiness(frontends),
    frontends: frontends.map((f) => ({
      name: f.name,
      listen: f.listen.map(formatAddress),
      counters: f.counters,
      discovery: f.discovery,
      localFault: f.localFault ? { ...f.localFault, reason: 'local', since: iso(f.localFault.since) } : null,
      connections: { open: f.openConnections, cap: f.connectionCap },
      upstreams: f.upstreams.map((u) => {
        const c = f.connections(u.key);
        return {
          upstream: u.key,
          state: u.state,
          drained: u.drained,
          backup: u.backup,
          local: u.local,
          reason: u.lastCheck ? `${u.lastCheck.reason}: ${u.lastCheck.detail}` : 'not checked yet',
          score: u.score,
          latencyMs: u.latencyMs === undefined ? undefined : Math.round(u.latencyMs * 10) / 10,
          version: u.version && `${u.version.major}.${u.version.minor}`,
          connections: { active: u.active, established: c.established, total: c.total },
          bytes: { toUpstream: c.bytesToUpstream, toClient: c.bytesToClient },
          lastCheck: u.lastCheck && { ...u.lastCheck, at: iso(u.lastCheck.at) },
          transitions: u.transitions.map((t) => ({ ...t, at: iso(t.at) })),
        };
      }),
    })),
  };
}
