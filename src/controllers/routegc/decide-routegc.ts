// One routegc cycle's decision (pure): which of the router's routes are the cluster's, which are
// orphaned or losing duplicates, which of those were already seen long enough ago (and go now,
// within the round's removal budget), and whether the observation is trustworthy enough to act on
// at all. Every refusal says why; the dry run reports exactly this decision.
import type { ExtraRoute } from '../../clients/openstack/openstack-types.ts';
import { applyBudget, DEFAULT_BUDGETS } from '../managed-cluster/blast-budget.ts';
import { cidrWithin, ipKey, parseCidr, sameCidr, type Cidr } from '../../base/ip.ts';
import { cidrSlackProblem, clusterCidrProblem, podCidrsOutside, type CidrPolicy } from '../managed-cluster/cidr-scope.ts';
import { hopsOfNode, mapInstancesToNodes, routeKey, validNextHops, type ClusterInstance, type ClusterNode } from '../managed-cluster/cluster-view.ts';
import { doubtAboutView, viewCounts } from '../managed-cluster/view-doubt.ts';

export type FindingReason = 'orphaned' | 'duplicate';

export interface RouteFinding {
  route: ExtraRoute;
  reason: FindingReason;
  detail: string;
}

/** What routegc remembers between cycles of one cluster. */
export interface RouteGcMemory {
  /** routeKey → when the route was first found orphaned or duplicate (epoch ms), while it stays so. */
  suspects: Record<string, number>;
  /** Instances and Nodes the previous trusted cycle saw. */
  lastInstanceCount?: number;
  lastNodeCount?: number;
}

/** The least time between the two sightings a removal needs; `--confirm-after` cannot go below it. */
export const MIN_CONFIRM_AFTER_MS = 10_000;

/**
 * A first sighting older than this (or three times --confirm-after, if longer) counts as none: after a
 * long outage of Nova or the cluster's API the servers are in flux, and one fresh look must not
 * confirm what a look from before the outage suspected. Long enough for one failed cycle between the
 * two sightings at the default interval (5 min plus up to 50 % jitter).
 */
export const SUSPECT_MAX_AGE_MS = 20 * 60_000;

/** Route removals per cluster and cycle unless configured: the shared blast-radius default. */
export const DEFAULT_MAX_REMOVALS_PER_CYCLE = DEFAULT_BUDGETS['route-removal'];

/** Neutron's max_routes per router upstream; routegc, flight and the operator default to it. */
export const DEFAULT_ROUTE_LIMIT = 30;

export interface RouteGcOptions extends CidrPolicy {
  clusterCidr: string;
  /** Refuse when the instance or Node list lost more than this fraction since the last cycle (default 0.5). */
  maxShrinkFraction?: number;
  /** Neutron max_routes (DEFAULT_ROUTE_LIMIT upstream). */
  routeLimit: number;
  /** Warn when fewer than this many routes are left before the limit (default 3). */
  routeLimitHeadroom?: number;
  /** A suspect is removed only when first seen at least this long ago (default 0: the next cycle). */
  confirmAfterMs?: number;
  /** Route removals per cycle (default 3); the rest wait for later cycles. */
  maxRemovalsPerCycle?: number;
  /** Whether instance name prefixes prove instances besides the Nodes; without them an empty Node list proves nothing. */
  hasInstancePrefixes?: boolean;
}

export interface RouteGcInput {
  nowMs?: number;
  routes: readonly ExtraRoute[];
  /** The cluster's candidate instances (proven or named by a Node, see cluster-identity.ts). */
  instances: readonly ClusterInstance[];
  nodes: readonly ClusterNode[];
  /**
   * Addresses (ipKey form) that a port on the router's networks holds, whoever owns the port: a
   * route whose next hop is one of them reaches something alive and is never orphaned.
   */
  heldHops: ReadonlySet<string>;
  /** Servers Nova listed with status UNKNOWN (down cell): the list may be partial. */
  unknownServers?: number;
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
  /** A stable name for the refusal (metric label, condition reason). */
  refusalCode?: string;
  /** Confirmed and within budget: remove now. */
  remove: RouteFinding[];
  /** Suspect, not confirmed yet: removed in a later cycle if still found. */
  pending: RouteFinding[];
  /** Confirmed but over the cycle's removal budget: removed in a later cycle. */
  heldBack: RouteFinding[];
  /** Duplicate destinations that cannot be settled (no Node owns the pod CIDR, or none of the routes reaches it). */
  unresolved: RouteFinding[];
  /** Routes whose next hop is none of the cluster's but a live port holds it: kept (another owner's, or one not proven). */
  heldByPort: RouteFinding[];
  counts: { seen: number; ours: number; orphaned: number; duplicate: number };
  routeLimit: RouteLimitState;
  memory: RouteGcMemory;
}

/** A route is the cluster's only if its whole destination lies inside the cluster CIDR. */
export function isOwnRoute(route: ExtraRoute, cluster: Cidr): boolean {
  const dest = parseCidr(route.destination);
  return dest !== undefined && cidrWithin(dest, cluster);
}

export function routeLimitState(count: number, limit: number, headroom = 3): RouteLimitState {
  return { count, limit, approaching: limit > 0 && count >= limit - headroom };
}

/**
 * What the Nodes' pod CIDRs say against the cluster CIDR (nothing without Nodes): one outside it, or
 * a cluster CIDR far wider than they need. Either way routes in it may be another cluster's. The
 * cycle and termination both refuse on it.
 */
export function nodeScopeRefusal(
  clusterCidr: string,
  nodes: readonly ClusterNode[],
  policy: CidrPolicy,
): { code: 'PodCIDROutsideClusterCIDR' | 'ClusterCIDRTooWide'; message: string } | undefined {
  const cluster = parseCidr(clusterCidr);
  if (!cluster) return undefined; // clusterCidrProblem refuses it first
  const outside = podCidrsOutside(cluster, nodes);
  if (outside.length)
    return {
      code: 'PodCIDROutsideClusterCIDR',
      message: `Node pod CIDRs outside the cluster CIDR ${clusterCidr} (${outside.slice(0, 5).join(', ')}): the cluster CIDR looks wrong`,
    };
  const slack = cidrSlackProblem(cluster, nodes, policy);
  return slack ? { code: 'ClusterCIDRTooWide', message: slack } : undefined;
}

export function decideRouteGc(input: RouteGcInput, opts: RouteGcOptions): RouteGcDecision {
  const routeLimit = routeLimitState(input.routes.length, opts.routeLimit, opts.routeLimitHeadroom);
  const counts = { seen: input.routes.length, ours: 0, orphaned: 0, duplicate: 0 };
  const base = { remove: [], pending: [], heldBack: [], unresolved: [], heldByPort: [], counts, routeLimit };
  const cidrProblem = clusterCidrProblem(opts.clusterCidr, opts);
  if (cidrProblem) return { ...base, refusal: cidrProblem, refusalCode: 'ClusterCIDRRefused', memory: { ...input.memory, suspects: {} } };
  const cluster = parseCidr(opts.clusterCidr)!;
  const ours = input.routes.filter((r) => isOwnRoute(r, cluster));
  counts.ours = ours.length;
  // No route of the cluster: nothing to resolve, and the lists were not read.
  if (ours.length === 0) return { ...base, memory: { ...input.memory, suspects: {} } };
  const refused = (code: string, refusal: string): RouteGcDecision =>
    // Suspicions formed on an untrusted view are dropped: a removal needs two trusted sightings.
    ({ ...base, refusal, refusalCode: code, memory: { suspects: {}, lastInstanceCount: input.instances.length, lastNodeCount: input.nodes.length } });
  const scope = nodeScopeRefusal(opts.clusterCidr, input.nodes, opts);
  if (scope) return refused(scope.code, scope.message);
  const doubt = doubtAboutView(viewCounts(input), { maxShrinkFraction: opts.maxShrinkFraction, emptyNodesAlwaysDoubt: !opts.hasInstancePrefixes });
  if (doubt)
    return refused(
      doubt.code,
      doubt.code === 'NodeListEmpty' && !opts.hasInstancePrefixes ? `${doubt.message}; and no instance prefix names the cluster's instances` : doubt.message,
    );
  const { findings, unresolved, heldByPort } = findSuspects(ours, input.instances, input.nodes, input.heldHops);
  counts.orphaned = findings.filter((f) => f.reason === 'orphaned').length;
  counts.duplicate = findings.filter((f) => f.reason === 'duplicate').length;
  const now = input.nowMs ?? 0;
  const maxAge = Math.max(SUSPECT_MAX_AGE_MS, 3 * (opts.confirmAfterMs ?? 0));
  const suspects: Record<string, number> = {};
  const earlier = (f: RouteFinding): number | undefined => {
    const first = input.memory.suspects[routeKey(f.route)];
    return first !== undefined && now - first <= maxAge ? first : undefined;
  };
  for (const f of findings) suspects[routeKey(f.route)] = earlier(f) ?? now;
  const confirmed = (f: RouteFinding) => earlier(f) !== undefined && now - suspects[routeKey(f.route)]! >= (opts.confirmAfterMs ?? 0);
  const budget = applyBudget(findings.filter(confirmed), opts.maxRemovalsPerCycle ?? DEFAULT_MAX_REMOVALS_PER_CYCLE);
  return {
    ...base,
    remove: budget.allowed,
    heldBack: budget.heldBack,
    pending: findings.filter((f) => !confirmed(f)),
    unresolved,
    heldByPort,
    memory: { suspects, lastInstanceCount: input.instances.length, lastNodeCount: input.nodes.length },
  };
}

function findSuspects(
  ours: readonly ExtraRoute[],
  instances: readonly ClusterInstance[],
  nodes: readonly ClusterNode[],
  heldHops: ReadonlySet<string>,
): { findings: RouteFinding[]; unresolved: RouteFinding[]; heldByPort: RouteFinding[] } {
  const valid = validNextHops(instances, nodes);
  const findings: RouteFinding[] = [];
  const heldByPort: RouteFinding[] = [];
  // Not the cluster's next hop is not proof of an orphan: only a next hop no port holds reaches nothing.
  const notOurs = ours.filter((r) => !valid.has(ipKey(r.nexthop)));
  for (const r of notOurs) {
    if (heldHops.has(ipKey(r.nexthop)))
      heldByPort.push({
        route: r,
        reason: 'orphaned',
        detail: `next hop ${r.nexthop} is no instance or Node of the cluster, but a port on the router's networks holds it`,
      });
    else findings.push({ route: r, reason: 'orphaned', detail: `next hop ${r.nexthop} is no instance or Node of the cluster, and no port holds it` });
  }
  const orphaned = new Set(notOurs.map((r) => routeKey(r)));
  const unresolved: RouteFinding[] = [];
  const map = mapInstancesToNodes(instances, nodes);
  for (const group of groupByDestination(ours)) {
    const live = group.routes.filter((r) => !orphaned.has(routeKey(r)));
    if (live.length < 2) continue;
    const owner = nodes.find((n) =>
      n.podCidrs.some((p) => {
        const c = parseCidr(p);
        return c !== undefined && sameCidr(c, group.cidr);
      }),
    );
    const ownerHops = owner ? hopsOfNode(owner, map) : new Set<string>();
    const keep = live.filter((r) => ownerHops.has(ipKey(r.nexthop)));
    if (!owner || keep.length === 0) {
      const why = owner ? `none of the next hops is Node ${owner.name}, which owns the pod CIDR` : 'no Node owns this pod CIDR';
      for (const r of live) unresolved.push({ route: r, reason: 'duplicate', detail: `${live.length} routes for ${r.destination}; ${why}` });
      continue;
    }
    for (const r of live) {
      if (!keep.includes(r))
        findings.push({ route: r, reason: 'duplicate', detail: `${r.destination} belongs to Node ${owner.name}, not next hop ${r.nexthop}` });
    }
  }
  return { findings, unresolved, heldByPort };
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

/** What termination removes of the cluster CIDR's routes, and what it leaves to its owner. */
export interface TerminationRoutes {
  /** Next hop of the cluster's (an instance or Node address), or held by no port at all (reaches nothing). */
  remove: ExtraRoute[];
  /** Next hop held by a port that is none of the cluster's instances: another owner's route, kept. */
  foreign: ExtraRoute[];
}

/**
 * The routes of the cluster CIDR that termination may remove: those whose next hop was the cluster's
 * (`clusterHops`: its instances' and Nodes' addresses) or that no port holds. A route whose next hop
 * a live port of someone else holds stays, however well its destination fits the CIDR. Throws as
 * ownRoutes for a CIDR that is not a valid, narrow enough scope.
 */
export function terminationRoutes(
  routes: readonly ExtraRoute[],
  clusterCidr: string,
  hops: { clusterHops: ReadonlySet<string>; heldHops: ReadonlySet<string> },
  policy: CidrPolicy = {},
): TerminationRoutes {
  const out: TerminationRoutes = { remove: [], foreign: [] };
  for (const r of ownRoutes(routes, clusterCidr, policy)) {
    const hop = ipKey(r.nexthop);
    (hops.clusterHops.has(hop) || !hops.heldHops.has(hop) ? out.remove : out.foreign).push(r);
  }
  return out;
}

/**
 * Every route of the cluster, for the clean-up at termination (nothing of the cluster is valid any
 * more). Throws a TypeError for a cluster CIDR that is not a valid, narrow enough scope: a /0 here
 * would remove every route of the router.
 */
export function ownRoutes(routes: readonly ExtraRoute[], clusterCidr: string, policy: CidrPolicy = {}): ExtraRoute[] {
  const problem = clusterCidrProblem(clusterCidr, policy);
  if (problem) throw new TypeError(problem);
  const cluster = parseCidr(clusterCidr)!;
  return routes.filter((r) => isOwnRoute(r, cluster));
}
