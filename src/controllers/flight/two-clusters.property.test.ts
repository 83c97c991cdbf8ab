// Property test (fast-check) of flight's decision as the operator drives it, for two ManagedClusters
// sharing one OpenStack project: same or different names in two namespaces, servers of either or of
// nobody (a person's kks-k1-small-debug), random Nova states including ERROR, names of the pool
// grammar with generated or human suffixes, plain and repeated names, Kubernikus's metadata and
// kubeward's stamps, and each cluster's Nodes registering its servers by providerID, by name or by
// InternalIP, Ready or not, some with a stale providerID. For each cluster's flight: no action ever
// targets a server that is not its own, and no server a Ready Node of its own protects is rebooted
// or deleted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { OWNER_METADATA_KEY, OWNER_REF_METADATA_KEY, proveOwnership, type ClusterIdentity } from '../managed-cluster/cluster-identity.ts';
import type { ClusterInstance, ClusterNode } from '../managed-cluster/cluster-view.ts';
import { kubernikusClaim } from '../managed-cluster/provisioner-claims.ts';
import { decideFlight, DEFAULT_FLIGHT_TIMING } from './decide-flight.ts';
import { emptyFlightMemory, type FlightOptions } from './flight-types.ts';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const MIN = 60_000;
const generated = fc.stringMatching(/^[bcdfghjklmnpqrstvwxz2456789]{5}$/);

const serverArb = fc.record({
  owner: fc.constantFrom('a', 'b', 'nobody'),
  name: fc.oneof(
    generated.map((s) => ({ kind: 'pool' as const, suffix: s })),
    fc.constantFrom('debug', 'test1', 'admin', 'b2xq9').map((s) => ({ kind: 'pool' as const, suffix: s })),
    fc.constantFrom('worker-1', 'worker-2').map((n) => ({ kind: 'plain' as const, name: n })),
  ),
  kubernikus: fc.boolean(),
  stamped: fc.boolean(),
  vmState: fc.constantFrom('active', 'active', 'error', 'building', 'stopped'),
  ageMin: fc.integer({ min: 0, max: 120 }),
  /** How the owner's cluster registers it. */
  node: fc.constantFrom('provider-id', 'name', 'internal-ip', 'stale', 'none', 'none'),
  ready: fc.constantFrom<boolean | undefined>(true, true, false, undefined),
});

const world = fc.record({
  nameB: fc.constantFrom('k1', 'k2'),
  servers: fc.array(serverArb, { maxLength: 14 }),
  /** Nodes named like other servers: people name Nodes too. */
  strayNodes: fc.array(fc.record({ of: fc.constantFrom('a', 'b'), server: fc.nat(20), ready: fc.boolean() }), { maxLength: 3 }),
  rebootBeforeDelete: fc.boolean(),
  lastNodes: fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
});
type World = typeof world extends fc.Arbitrary<infer T> ? T : never;

interface Cluster {
  key: 'a' | 'b';
  ns: string;
  name: string;
  uid: string;
}

function build(w: World) {
  const clusters: Record<'a' | 'b', Cluster> = {
    a: { key: 'a', ns: 'ns-a', name: 'k1', uid: 'uid-a' },
    b: { key: 'b', ns: 'ns-b', name: w.nameB, uid: 'uid-b' },
  };
  const ownerOf = new Map<string, 'a' | 'b' | 'nobody'>();
  const nodes: Record<'a' | 'b', ClusterNode[]> = { a: [], b: [] };
  const servers: ClusterInstance[] = w.servers.map((s, i) => {
    const c = s.owner === 'nobody' ? undefined : clusters[s.owner];
    const cluster = c?.name ?? 'k1';
    const name = s.name.kind === 'pool' ? `kks-${cluster}-small-${s.name.suffix}` : s.name.name;
    const metadata: Record<string, string> = {};
    if (c && s.kubernikus) Object.assign(metadata, kubernikusClaim(c.name).metadata);
    if (c && s.stamped) Object.assign(metadata, { [OWNER_METADATA_KEY]: c.uid, [OWNER_REF_METADATA_KEY]: `${c.ns}/${c.name}` });
    ownerOf.set(`id-${i}`, s.owner);
    const ip = `10.0.${Math.floor(i / 200)}.${(i % 200) + 1}`;
    if (c && s.node !== 'none') {
      const node: ClusterNode = { name: `${c.key}-node-${i}`, addresses: [`10.99.0.${i + 1}`], podCidrs: [], ready: s.ready };
      if (s.node === 'provider-id') node.instanceId = `id-${i}`;
      if (s.node === 'name') node.name = name;
      if (s.node === 'internal-ip') node.addresses = [ip];
      if (s.node === 'stale') Object.assign(node, { name, addresses: [ip], instanceId: `gone-${i}` });
      nodes[c.key].push(node);
    }
    return {
      id: `id-${i}`,
      name,
      status: 'ACTIVE',
      addresses: [ip],
      createdMs: NOW - s.ageMin * MIN,
      vmState: s.vmState,
      taskState: s.vmState === 'building' ? 'spawning' : null,
      powerState: s.vmState === 'stopped' ? 4 : 1,
      securityGroups: [],
      tags: [],
      metadata,
    };
  });
  for (const [i, stray] of w.strayNodes.entries()) {
    const target = servers[stray.server % Math.max(1, servers.length)];
    if (target) nodes[stray.of].push({ name: target.name, addresses: [`10.98.0.${i + 1}`], podCidrs: [], ready: stray.ready });
  }
  return { clusters, servers, nodes, ownerOf };
}

function flightOf(c: Cluster, other: Cluster, servers: ClusterInstance[], nodes: ClusterNode[], w: World) {
  const identity: ClusterIdentity = {
    ownerId: c.uid,
    ownerRef: `${c.ns}/${c.name}`,
    poolPrefixes: [`kks-${c.name}-small-`],
    provisionerClaims: [kubernikusClaim(c.name)],
    namesakes: other.name === c.name ? [`${other.ns}/${other.name}`] : [],
  };
  const ownership = proveOwnership(servers, nodes, identity);
  const o: FlightOptions = {
    clusterName: c.name,
    ownerId: c.uid,
    ownerRef: identity.ownerRef,
    clusterCidr: '100.100.0.0/16',
    securityGroupName: `${c.name}-sg`,
    pools: [{ name: 'small', prefix: `kks-${c.name}-small-` }],
    ...DEFAULT_FLIGHT_TIMING,
    rebootBeforeDelete: w.rebootBeforeDelete,
    wantedRoles: [],
    forceSecurityGroupResync: false,
    repairMissingRoutes: false,
    routeLimit: 30,
    maxDeletionsPerRound: 100,
    maxRebootsPerRound: 100,
    maxMetadataWritesPerRound: 100,
    maxRuleChangesPerRound: 100,
  };
  return decideFlight(
    {
      nowMs: NOW,
      instances: ownership.candidates.filter((x) => ownership.proven.has(x.id)),
      candidates: ownership.candidates,
      duplicateNames: ownership.duplicateNames,
      previousOwners: ownership.previousOwners,
      conflicts: ownership.conflicts,
      nodes,
      groups: [{ id: 'sg', name: `${c.name}-sg`, description: '', project_id: 'p', security_group_rules: [], revision_number: 1 }],
      serviceUserRoles: undefined,
      routes: undefined,
      memory: { ...emptyFlightMemory(), lastNodeCount: w.lastNodes },
    },
    o,
  );
}

/** Independent of flight's code: a Node of the cluster, not NotReady, that names the server by providerID, name or address. */
const readyNodeOf = (s: ClusterInstance, nodes: readonly ClusterNode[]) =>
  nodes.some((n) => n.ready !== false && (n.instanceId === s.id || n.name === s.name || n.addresses.some((a) => s.addresses.includes(a))));

test("two clusters sharing a project: no flight action targets the other cluster's or a person's server, and no server with a Ready Node is rebooted or deleted", () => {
  fc.assert(
    fc.property(world, (w) => {
      const { clusters, servers, nodes, ownerOf } = build(w);
      for (const [me, other] of [
        ['a', 'b'],
        ['b', 'a'],
      ] as const) {
        const plan = flightOf(clusters[me], clusters[other], servers, nodes[me], w);
        for (const a of [...plan.actions, ...plan.heldBack]) {
          if (!('instanceId' in a)) continue;
          assert.equal(ownerOf.get(a.instanceId), me, `${me}'s flight: ${a.kind} on ${a.instanceName} (${ownerOf.get(a.instanceId)}'s)`);
          if (a.kind === 'reboot' || a.kind === 'delete-instance') {
            const s = servers.find((x) => x.id === a.instanceId)!;
            assert.ok(!readyNodeOf(s, nodes[me]), `${me}'s flight: ${a.kind} on ${s.name}, which a Ready Node protects`);
          }
        }
      }
    }),
    { numRuns: 500 },
  );
});

test('the generator reaches the cases that matter: destructive actions happen, and namesakes and Ready errored servers occur', () => {
  // A property that never sees a reboot or deletion would hold trivially.
  let destructive = 0;
  let namesakes = 0;
  let protectedErrored = 0;
  fc.assert(
    fc.property(world, (w) => {
      const { clusters, servers, nodes } = build(w);
      if (w.nameB === 'k1') namesakes++;
      const plan = flightOf(clusters.a, clusters.b, servers, nodes.a, w);
      if (plan.actions.some((a) => a.kind === 'reboot' || a.kind === 'delete-instance')) destructive++;
      if (plan.findings.some((f) => f.reason === 'ErroredInstanceNodeReady')) protectedErrored++;
    }),
    { numRuns: 300, seed: 24 },
  );
  assert.ok(destructive > 10, `destructive plans: ${destructive}`);
  assert.ok(namesakes > 50, `namesake worlds: ${namesakes}`);
  assert.ok(protectedErrored > 10, `errored servers a Node protects: ${protectedErrored}`);
});
