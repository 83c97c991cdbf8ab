// Route health per Node (pure): a pod CIDR without a route to its Node (missing, or pointing
// elsewhere) is a RouteMissing condition and, when allowed, a route to add within the route limit;
// several routes for one pod CIDR, or one whose next hop is no live instance, is a RouteConflict.
import type { ExtraRoute } from '../../clients/openstack/openstack-types.ts';
import { ipKey, parseCidr, sameCidrText } from '../../base/ip.ts';
import { hopsOfNode, mapInstancesToNodes, validNextHops, type ClusterInstance, type ClusterNode } from '../managed-cluster/cluster-view.ts';
import type { FlightAction, FlightFinding, NodeConditionWish } from './flight-types.ts';

export interface RouteHealth {
  actions: FlightAction[];
  conditions: NodeConditionWish[];
  findings: FlightFinding[];
}

export interface RouteHealthOptions {
  repairMissingRoutes: boolean;
  routeLimit: number;
}

export function decideRouteHealth(
  routes: readonly ExtraRoute[],
  instances: readonly ClusterInstance[],
  nodes: readonly ClusterNode[],
  o: RouteHealthOptions,
): RouteHealth {
  const map = mapInstancesToNodes(instances, nodes);
  const valid = validNextHops(instances, nodes);
  const out: RouteHealth = { actions: [], conditions: [], findings: [] };
  let room = o.routeLimit - routes.length;
  for (const n of nodes.filter((x) => x.podCidrs.length > 0)) {
    const hops = hopsOfNode(n, map);
    const missing: string[] = [];
    const conflicts: string[] = [];
    let target: ExtraRoute | undefined;
    for (const pod of n.podCidrs.filter((p) => parseCidr(p) !== undefined)) {
      const mine = routes.filter((r) => sameCidrText(r.destination, pod));
      const toNode = mine.filter((r) => hops.has(ipKey(r.nexthop)));
      const stale = mine.filter((r) => !valid.has(ipKey(r.nexthop)));
      if (toNode.length === 0) {
        missing.push(mine.length === 0 ? `no route for ${pod}` : `${pod} is routed to ${mine.map((r) => r.nexthop).join(', ')}, not to this Node`);
        const hop = nextHopFor(n, pod);
        if (hop && !target) target = { destination: pod, nexthop: hop };
      }
      if (mine.length > 1) conflicts.push(`${mine.length} routes for ${pod} (${mine.map((r) => r.nexthop).join(', ')})`);
      if (stale.length) conflicts.push(`${pod} routed to ${stale.map((r) => r.nexthop).join(', ')}, which is no live instance`);
    }
    out.conditions.push(condition(n.name, 'kubeward.io/RouteMissing', missing, 'RouteMissing', 'RoutePresent'));
    out.conditions.push(
      condition(
        n.name,
        'kubeward.io/RouteConflict',
        conflicts,
        conflicts.some((c) => c.includes('no live')) ? 'StaleNextHop' : 'DuplicateRoutes',
        'NoConflict',
      ),
    );
    if (missing.length && o.repairMissingRoutes && target) {
      if (room > 0) {
        out.actions.push({ kind: 'add-route', route: target, node: n.name });
        room--;
      } else {
        out.findings.push({
          repair: 'routes',
          reason: 'RouteLimitReached',
          node: n.name,
          message: `cannot add ${target.destination} via ${target.nexthop}: the router holds ${routes.length} of ${o.routeLimit} routes`,
        });
      }
    }
  }
  return out;
}

/** The Node's address in the pod CIDR's family (InternalIP first, as the adapter orders them). */
function nextHopFor(n: ClusterNode, pod: string): string | undefined {
  const v6 = pod.includes(':');
  return n.addresses.find((a) => a.includes(':') === v6);
}

function condition(node: string, type: NodeConditionWish['type'], problems: string[], trueReason: string, falseReason: string): NodeConditionWish {
  return problems.length
    ? { node, type, status: 'True', reason: trueReason, message: problems.join('; ') }
    : { node, type, status: 'False', reason: falseReason, message: "the router routes this Node's pod CIDR to it" };
}
