// Property test (fast-check): two clusters share one project and one router. Cluster A's routegc
// and its termination clean-up run with random cluster CIDRs (forced wide ones included), random
// server and Node lists, random ports and a memory that already suspects every route; whatever they
// decide, no removal ever names a route of cluster B whose next hop a port of B's holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ipKey } from '../../base/ip.ts';
import { proveOwnership } from '../managed-cluster/cluster-identity.ts';
import { routeKey, validNextHops, type ClusterInstance, type ClusterNode } from '../managed-cluster/cluster-view.ts';
import { inst, node, r } from '../managed-cluster/cluster-fixtures.test-helpers.ts';
import { decideRouteGc, terminationRoutes, type RouteGcMemory } from './decide-routegc.ts';

/** A cluster's servers (10.0.0.<host>, on the router's one network) and which of them are Nodes with a pod CIDR. */
const cluster = (hostBase: number) =>
  fc.uniqueArray(
    fc.record({
      host: fc.integer({ min: hostBase, max: hostBase + 19 }),
      pod: fc.integer({ min: 0, max: 15 }),
      registered: fc.boolean(),
      portLeft: fc.boolean(),
    }),
    { maxLength: 5, selector: (s) => s.host },
  );

const world = fc.record({
  a: cluster(10),
  b: cluster(40),
  // A's CIDR: its own /16, one that also holds B's pod CIDRs, or the whole /8 (forced or not).
  aCidr: fc.constantFrom('10.1.0.0/16', '10.0.0.0/14', '10.0.0.0/8'),
  force: fc.boolean(),
  allowWide: fc.boolean(),
  // Routes nobody's: next hops no port holds.
  strays: fc.uniqueArray(fc.record({ pod: fc.integer({ min: 0, max: 15 }), host: fc.integer({ min: 200, max: 210 }), inB: fc.boolean() }), { maxLength: 4 }),
  prefixes: fc.boolean(),
});

type World = typeof world extends fc.Arbitrary<infer T> ? T : never;

/** Cluster A lives in 10.1.0.0/16, B in 10.2.0.0/16; each server's route sends its pod CIDR to it. */
function build(w: World) {
  const servers = (list: typeof w.a, owner: string, second: number): ClusterInstance[] =>
    list
      .map((s) =>
        inst(`${owner}-${s.host}`, [`10.0.0.${s.host}`], {
          name: `kks-${owner}-small-${String(s.host).padStart(5, '0')}`,
          metadata: { 'kubeward:owner': `uid-${owner}` },
        }),
      )
      .map((x, i) => ({ ...x, id: `${x.id}-${second}-${i}` }));
  const aServers = servers(w.a, 'a', 1);
  const bServers = servers(w.b, 'b', 2);
  const aNodes: ClusterNode[] = w.a.flatMap((s, i) =>
    s.registered ? [node(`a-${s.host}`, [`10.0.0.${s.host}`], [`10.1.${s.pod}.0/24`], aServers[i]!.id)] : [],
  );
  const aRoutes = w.a.map((s) => r(`10.1.${s.pod}.0/24`, `10.0.0.${s.host}`));
  const bRoutes = w.b.map((s) => r(`10.2.${s.pod}.0/24`, `10.0.0.${s.host}`));
  const strayRoutes = w.strays.map((s) => r(`10.${s.inB ? 2 : 1}.${s.pod}.0/24`, `10.0.0.${s.host}`));
  // Every server has its port; some of A's were deleted with their port gone (left out of Nova too).
  const held = new Set([...w.a.filter((s) => !s.portLeft).map((s) => s.host), ...w.b.map((s) => s.host)].map((h) => ipKey(`10.0.0.${h}`)));
  const liveA = aServers.filter((_, i) => !w.a[i]!.portLeft);
  const routes = [...new Map([...aRoutes, ...bRoutes, ...strayRoutes].map((x) => [routeKey(x), x])).values()];
  return { servers: [...liveA, ...bServers], aNodes, bRoutes, routes, held };
}

test("no routegc or termination action of cluster A touches cluster B's routes on a shared router, whatever A's CIDR", () => {
  fc.assert(
    fc.property(world, (w) => {
      const { servers, aNodes, bRoutes, routes, held } = build(w);
      const identity = { ownerId: 'uid-a', poolPrefixes: w.prefixes ? ['kks-a-small-'] : [] };
      const own = proveOwnership(servers, aNodes, identity);
      const policy = { allowWide: w.allowWide, forceClusterCidr: w.force };
      const memory: RouteGcMemory = {
        suspects: Object.fromEntries(routes.map((x) => [routeKey(x), 0])),
        lastInstanceCount: servers.length,
        lastNodeCount: aNodes.length,
      };
      const d = decideRouteGc(
        { nowMs: 1_000_000, routes, instances: own.candidates, nodes: aNodes, heldHops: held, memory },
        { clusterCidr: w.aCidr, routeLimit: 100, maxRemovalsPerCycle: 100, hasInstancePrefixes: w.prefixes, ...policy },
      );
      // B's routes whose next hop a port of B's holds: the ones that must never go.
      const bLive = new Set(bRoutes.map(routeKey));
      for (const f of d.remove) assert.ok(!bLive.has(routeKey(f.route)), `routegc of A removed B's route ${routeKey(f.route)} (${f.detail})`);
      let split;
      try {
        split = terminationRoutes(
          routes,
          w.aCidr,
          {
            clusterHops: validNextHops(
              own.candidates.filter((c) => own.proven.has(c.id)),
              aNodes,
            ),
            heldHops: held,
          },
          policy,
        );
      } catch {
        return; // a CIDR the scope rules refuse: termination removes nothing at all
      }
      for (const x of split.remove) assert.ok(!bLive.has(routeKey(x)), `termination of A removed B's route ${routeKey(x)}`);
    }),
    { numRuns: 1500 },
  );
});
