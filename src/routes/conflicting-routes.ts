// Local routes that defeat the redirect: Google's guest agent adds `local <VIP> ... proto 66` to
// the local table, which makes the VIP a local address, so the node's own traffic to it never
// leaves the host whatever our rules say. Parsing and matching are pure; the adapter runs `ip`.
import { cidrContains, parseIp, parsePrefixOrAddress } from '../base/ip.ts';
import { parseJson, type CommandRunner } from './rules-backend.ts';

export const GUEST_AGENT_PROTO = 66;

export interface LocalRoute {
  family: 4 | 6;
  /** As `ip` prints it: an address or a prefix. */
  dst: string;
  dev?: string;
}

/** `ip -j route show table local proto 66` output → routes; anything unexpected is skipped. */
export function parseLocalRoutes(json: string, family: 4 | 6): LocalRoute[] {
  const data = parseJson(json, 'ip -j route');
  if (!Array.isArray(data)) return [];
  const out: LocalRoute[] = [];
  for (const r of data as Record<string, unknown>[]) {
    if (typeof r?.dst !== 'string' || (r.type !== undefined && r.type !== 'local')) continue;
    out.push({ family, dst: r.dst, ...(typeof r.dev === 'string' ? { dev: r.dev } : {}) });
  }
  return out;
}

/** Routes whose destination is, or contains, one of the VIPs. */
export function findConflicts(routes: readonly LocalRoute[], vips: readonly string[]): { route: LocalRoute; vip: string }[] {
  const out: { route: LocalRoute; vip: string }[] = [];
  for (const route of routes) {
    for (const vip of vips) if (prefixContains(route.dst, vip)) out.push({ route, vip });
  }
  return out;
}

/** Whether `prefix` (as `ip` prints it: a prefix, or an address for a host route) holds `ip`; false for anything unreadable. */
export function prefixContains(prefix: string, ip: string): boolean {
  const c = parsePrefixOrAddress(prefix);
  const a = parseIp(ip);
  return c !== undefined && a !== undefined && cidrContains(c, a);
}

/** Reads the guest agent's local routes of both families. */
export async function listGuestAgentRoutes(run: CommandRunner): Promise<LocalRoute[]> {
  const out: LocalRoute[] = [];
  for (const family of [4, 6] as const) {
    const r = await run(['ip', `-${family}`, '-j', 'route', 'show', 'table', 'local', 'proto', String(GUEST_AGENT_PROTO)], { timeoutMs: 5000 });
    out.push(...parseLocalRoutes(r.stdout, family));
  }
  return out;
}

export async function removeLocalRoute(run: CommandRunner, route: LocalRoute): Promise<void> {
  const dev = route.dev ? ['dev', route.dev] : [];
  await run(['ip', `-${route.family}`, 'route', 'del', 'local', route.dst, ...dev, 'table', 'local', 'proto', String(GUEST_AGENT_PROTO)], { timeoutMs: 5000 });
}
