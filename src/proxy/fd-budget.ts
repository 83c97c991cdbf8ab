// The per-frontend connection cap: what --max-connections says, bounded by the process's file
// descriptor limit minus a reserve for health checks, the admin listener and Node itself, so a
// flood of clients meets the cap (the next connection is closed at accept) before EMFILE, and the
// checks keep running. Linux reads the limit from /proc; elsewhere only --max-connections applies.
import { readdirSync, readFileSync } from 'node:fs';

/** Descriptors kept free beyond those counted: DNS, reload file reads, the cache file, worker IPC. */
export const SPARE_FDS = 64;

export interface FdBudgetInput {
  /** The soft RLIMIT_NOFILE, or undefined when unknown (no cap from it). */
  fdLimit: number | undefined;
  /** Descriptors open when the budget is made (stdio, epoll, listeners, admin listener, ...). */
  fdsInUse: number;
  /** Most admin connections open at once. */
  adminConnections: number;
  frontends: readonly { name: string; maxConnections?: number; upstreams: number }[];
}

export interface ConnectionCap {
  /** Client connections this frontend may hold at once (each costs two descriptors). */
  cap: number;
  /** Where the number came from, for the start-up log line. */
  source: 'max-connections' | 'fd-limit' | 'none';
}

/**
 * Caps per frontend. The reserve is the descriptors in use plus one per upstream check (a check
 * holds one socket, and a reload may briefly run old and new checks: two), the admin connections
 * and SPARE_FDS; what is left is shared equally, two descriptors per client connection. Pure.
 */
export function planConnectionCaps(input: FdBudgetInput): Map<string, ConnectionCap> {
  const caps = new Map<string, ConnectionCap>();
  const checks = input.frontends.reduce((n, f) => n + 2 * f.upstreams, 0);
  const free = input.fdLimit === undefined ? Infinity : input.fdLimit - input.fdsInUse - checks - input.adminConnections - SPARE_FDS;
  const share = Math.max(1, Math.floor(free / 2 / Math.max(1, input.frontends.length)));
  for (const f of input.frontends) {
    if (f.maxConnections !== undefined && f.maxConnections <= share) caps.set(f.name, { cap: f.maxConnections, source: 'max-connections' });
    else if (Number.isFinite(share)) caps.set(f.name, { cap: share, source: 'fd-limit' });
    else caps.set(f.name, { cap: Number.MAX_SAFE_INTEGER, source: 'none' });
  }
  return caps;
}

/** The soft "Max open files" of this process, or undefined off Linux or when unlimited. */
export function readFdLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m && m[1] !== 'unlimited' ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Descriptors open in this process now, or 0 when unknown. */
export function countOpenFds(): number {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return 0;
  }
}
