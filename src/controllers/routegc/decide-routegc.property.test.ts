// Property tests (fast-check) of routegc's decision: for random routers, instance and Node lists and
// a previous cycle's memory, a removal only ever targets a route of the router inside the cluster
// CIDR that was already suspect last cycle and does not reach the Node owning its pod CIDR; never
// more than the budget; nothing at all on a doubtful view.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { cidrWithin, ipKey, parseCidr, sameCidrText } from '../../base/ip.ts';
import { routeKey, type ClusterInstance, type ClusterNode } from '../managed-cluster/cluster-view.ts';
import { decideRouteGc, type RouteGcMemory, type RouteGcOptions } from './decide-routegc.ts';

const octet = fc.integer({ min: 0, max: 7 });
const route = fc.record({
  destination: fc.oneof(
    octet.map((i) => `100.100.${i}.0/24`),
    octet.map((i) => `10.${i}.0.0/16`),
    fc.constant('100.100.0.0/15'),
    fc.constant('0.0.0.0/0'),
  ),
  nexthop: octet.map((i) => `10.0.0.${10 + i}`),
});
const world = fc.record({
  clusterCidr: fc.constantFrom('100.100.0.0/16', '0.0.0.0/0', '100.0.0.0/6', '100.100.0.0/16'),
  routes: fc.uniqueArray(route, { maxLength: 12, selector: (r) => `${r.destination}>${r.nexthop}` }),
  // Empty lists are the dangerous case: drawn often on purpose.
  instances: fc.oneof(fc.constant<number[]>([]), fc.uniqueArray(octet, { maxLength: 6 })),
  nodes: fc.oneof(
    fc.constant<{ ip: number; pod: number | undefined }[]>([]),
    fc.uniqueArray(fc.record({ ip: octet, pod: fc.option(octet, { nil: undefined }) }), { maxLength: 6, selector: (n) => n.ip }),
  ),
  unknownServers: fc.integer({ min: 0, max: 9 }).map((n) => (n === 0 ? 1 : 0)),
  suspectAll: fc.boolean(),
  prefixes: fc.boolean(),
  budget: fc.integer({ min: 0, max: 4 }),
  lastInstances: fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
});

test('routegc removes only confirmed, in-CIDR routes of the router that no owning Node needs, within budget, and nothing on doubt', () => {
  fc.assert(
    fc.property(world, (w) => {
      const instances: ClusterInstance[] = w.instances.map((i) => ({
        id: `s${i}`,
        name: `s${i}`,
        addresses: [`10.0.0.${10 + i}`],
        createdMs: 0,
        securityGroups: [],
        tags: [],
        metadata: {},
      }));
      const nodes: ClusterNode[] = w.nodes.map((n) => ({
        name: `s${n.ip}`,
        addresses: [`10.0.0.${10 + n.ip}`],
        podCidrs: n.pod === undefined ? [] : [`100.100.${n.pod}.0/24`],
        instanceId: w.instances.includes(n.ip) ? `s${n.ip}` : undefined,
      }));
      // Last cycle suspected every route (or none): the strongest memory a removal can build on.
      const memory: RouteGcMemory = {
        suspects: w.suspectAll ? Object.fromEntries(w.routes.map((r) => [routeKey(r), 0])) : {},
        lastInstanceCount: w.lastInstances,
      };
      const opts: RouteGcOptions = { clusterCidr: w.clusterCidr, routeLimit: 30, maxRemovalsPerCycle: w.budget, hasInstancePrefixes: w.prefixes };
      const d = decideRouteGc({ heldHops: new Set(), nowMs: 1000, routes: w.routes, instances, nodes, unknownServers: w.unknownServers, memory }, opts);
      assert.ok(d.remove.length <= w.budget, 'budget');
      const cluster = parseCidr(w.clusterCidr)!;
      for (const f of d.remove) {
        assert.ok(
          w.routes.some((r) => r.destination === f.route.destination && r.nexthop === f.route.nexthop),
          'a route of the router',
        );
        assert.ok(cidrWithin(parseCidr(f.route.destination)!, cluster), 'inside the cluster CIDR');
        assert.ok(cluster.prefix >= 8, 'never with a wide or /0 scope');
        assert.ok(routeKey(f.route) in memory.suspects, 'seen twice');
        const owner = nodes.find((n) => n.podCidrs.some((p) => sameCidrText(p, f.route.destination)));
        if (owner) assert.ok(!owner.addresses.map(ipKey).includes(ipKey(f.route.nexthop)), 'never the route to the Node that owns the pod CIDR');
      }
      if (w.unknownServers > 0 || (nodes.length === 0 && !w.prefixes)) assert.deepEqual(d.remove, [], 'doubtful view');
    }),
    { numRuns: 1000 },
  );
});
