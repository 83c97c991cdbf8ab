// One routegc cycle's decision (pure): which of the router's routes are the cluster's, which are
// orphaned or losing duplicates, which of those were already seen last cycle (and go now), and
// whether the observation is trustworthy enough to act on at all.
import type { ExtraRoute } from '../../clients/openstack/openstack-types.ts';
import { cidrWithin, normalizeIp, parseCidr, sameCidr, type Cidr } from './cidr.ts';
import { hopsOfNode, mapInstancesToNodes, validNextHops, type ClusterInstance, type ClusterNode } from './cluster-view.ts';

export type FindingReason = 'orphaned' | 'duplicate';

export interface RouteFinding {
  route: ExtraRoute;
  reason: FindingReason;
  detail: string;
}

/** What routegc remembers between cycles of one cluster. */
export interface RouteGcMemory {
  /** Keys (routeKey) of the routes found orphaned or duplicate in the previous cycle. */
  suspects: string[];
  /** Instances the previous trusted cycle saw. */
  lastInstanceCount?: number;
}

export interface RouteGcOptions {
  clusterCidr: string;
  /** Refuse when the instance list lost more than this fraction since the last cycle while Nodes exist (default 0.5). */
  maxShrinkFraction?: number;
  /** Neutron max_routes (30 upstream). */
  routeLimit: number;
  /** Warn when fewer than this many routes are left before the limit (default 3). */
  routeLimitHeadroom?: number;
}

export interface RouteGcInput {
  routes: readonly ExtraRoute[];
  /** The cluster's own instances (see selectClusterInstances). */
  instances: readonly ClusterInstance[];
  nodes: readonly ClusterNode[];
  memory: RouteGcMemory;
}

export interface RouteLimitState {
  count: number;
  limit: number;
  approaching: boolean;
}

export interface RouteGcDecision {
  /** Why nothing may be removed this cycle; undefined when the observation is trusted. */
  refusal?: string;
  /** Confirmed (seen last cycle too): remove now. */
  remove: RouteFinding[];
  /** First sighting: removed next cycle if still found. */
  pending: RouteFinding[];
  /** Duplicate destinations that cannot be settled (no Node owns the pod CIDR, or none of the routes reaches it). */
  unresolved: RouteFinding[];
  counts: { seen: number; ours: number; orphaned: number; duplicate: number };
  routeLimit: RouteLimitState;
  memory: RouteGcMemory;
}

export const routeKey = (r: ExtraRoute): string => `${r.destination}>${normalizeIp(r.nexthop)}`;

/** A route is the cluster's only if its whole destination lies inside the cluster CIDR. */
export function isOwnRoute(route: ExtraRoute, cluster: Cidr): boolean {
  const dest = parseCidr(route.destination);
  return dest !== undefined && cidrWithin(dest, cluster);
}

export function routeLimitState(count: number, limit: number, headroom = 3): RouteLimitState {
  return { count, limit, approaching: limit > 0 && count >= limit - headroom };
}

/** Why the instance list cannot be trusted, or undefined. */
export function refusalReason(instances: number, nodes: number, last: number | undefined, maxShrink: number): string | undefined {
  if (nodes === 0) return undefined;
  if (instances === 0) return `the instance list is empty while ${nodes} Node(s) exist`;
  if (last !== undefined && instances < last * (1 - maxShrink)) {
    return `the instance list shrank from ${last} to ${instances} since the last cycle while ${nodes} Node(s) exist`;
  }
  return undefined;
}

export function decideRouteGc(input: RouteGcInput, opts: RouteGcOptions): RouteGcDecision {
  const cluster = parseCidr(opts.clusterCidr);
  if (!cluster) throw new TypeError(`cluster CIDR ${JSON.stringify(opts.clusterCidr)} is not a CIDR`);
  const ours = input.routes.filter((r) => isOwnRoute(r, cluster));
  const routeLimit = routeLimitState(input.routes.length, opts.routeLimit, opts.routeLimitHeadroom);
  const refusal = ours.length === 0 ? undefined : refusalReason(input.instances.length, input.nodes.length, input.memory.lastInstanceCount, opts.maxShrinkFraction ?? 0.5);
  const counts = { seen: input.routes.length, ours: ours.length, orphaned: 0, duplicate: 0 };
  if (refusal) {
    // Suspicions formed on an untrusted list are dropped: a removal needs two trusted sightings.
    return { refusal, remove: [], pending: [], unresolved: [], counts, routeLimit, memory: { suspects: [], lastInstanceCount: input.instances.length } };
  }
  const { findings, unresolved } = findSuspects(ours, input.instances, input.nodes);
  counts.orphaned = findings.filter((f) => f.reason === 'orphaned').length;
  counts.duplicate = findings.filter((f) => f.reason === 'duplicate').length;
  const before = new Set(input.memory.suspects);
  const remove = findings.filter((f) => before.has(routeKey(f.route)));
  const pending = findings.filter((f) => !before.has(routeKey(f.route)));
  const lastInstanceCount = ours.length === 0 ? input.memory.lastInstanceCount : input.instances.length;
  return { remove, pending, unresolved, counts, routeLimit, memory: { suspects: findings.map((f) => routeKey(f.route)), lastInstanceCount } };
}

function findSuspects(ours: readonly ExtraRoute[], instances: readonly ClusterInstance[], nodes: readonly ClusterNode[]): { findings: RouteFinding[]; unresolved: RouteFinding[] } {
  const valid = validNextHops(instances, nodes);
  const findings: RouteFinding[] = [];
  for (const r of ours) {
    if (!valid.has(normalizeIp(r.nexthop))) findings.push({ route: r, reason: 'orphaned', detail: `next hop ${r.nexthop} is no instance or Node of the cluster` });
  }
  const orphaned = new Set(findings.map((f) => routeKey(f.route)));
  const unresolved: RouteFinding[] = [];
  const map = mapInstancesToNodes(instances, nodes);
  for (const group of groupByDestination(ours)) {
    const live = group.routes.filter((r) => !orphaned.has(routeKey(r)));
    if (live.length < 2) continue;
    const owner = nodes.find((n) => n.podCidrs.some((p) => { const c = parseCidr(p); return c !== undefined && sameCidr(c, group.cidr); }));
    const ownerHops = owner ? hopsOfNode(owner, map) : new Set<string>();
    const keep = live.filter((r) => ownerHops.has(normalizeIp(r.nexthop)));
    if (!owner || keep.length === 0) {
      const why = owner ? `none of the next hops is Node ${owner.name}, which owns the pod CIDR` : 'no Node owns this pod CIDR';
      for (const r of live) unresolved.push({ route: r, reason: 'duplicate', detail: `${live.length} routes for ${r.destination}; ${why}` });
      continue;
    }
    for (const r of live) {
      if (!keep.includes(r)) findings.push({ route: r, reason: 'duplicate', detail: `${r.destination} belongs to Node ${owner.name}, not next hop ${r.nexthop}` });
    }
  }
  return { findings, unresolved };
}

function groupByDestination(routes: readonly ExtraRoute[]): { cidr: Cidr; routes: ExtraRoute[] }[] {
  const groups: { cidr: Cidr; routes: ExtraRoute[] }[] = [];
  for (const r of routes) {
    const c = parseCidr(r.destination)!;
    const g = groups.find((x) => sameCidr(x.cidr, c));
    if (g) g.routes.push(r);
    else groups.push({ cidr: c, routes: [r] });
  }
  return groups;
}

/** Every route of the cluster, for the clean-up at termination (nothing of the cluster is valid any more). */
export function ownRoutes(routes: readonly ExtraRoute[], clusterCidr: string): ExtraRoute[] {
  const cluster = parseCidr(clusterCidr);
  if (!cluster) throw new TypeError(`cluster CIDR ${JSON.stringify(clusterCidr)} is not a CIDR`);
  return routes.filter((r) => isOwnRoute(r, cluster));
}
