// Property tests (fast-check) of flight's decision as the runner drives it (ownership proof, then
// decideFlight): for random clusters, server lists and Node lists, no destructive action targets a
// server outside the cluster's proven set, budgets are never exceeded, and a doubtful view (empty
// Node list, UNKNOWN servers) destroys nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_BUDGETS } from '../managed-cluster/blast-budget.ts';
import { OWNER_METADATA_KEY, proveOwnership } from '../managed-cluster/cluster-identity.ts';
import type { ClusterInstance, ClusterNode } from '../managed-cluster/cluster-view.ts';
import { budgetKindOf, budgetsOf, decideFlight, DEFAULT_FLIGHT_TIMING } from './decide-flight.ts';
import { emptyFlightMemory, type FlightAction, type FlightOptions } from './flight-types.ts';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const MIN = 60_000;
const seg = fc.stringMatching(/^[a-z0-9]{1,4}$/);
const suffix = fc.stringMatching(/^[a-z0-9]{5}$/);

const world = fc.record({
  cluster: fc.constantFrom('k1', 'k1-small', 'k2'),
  pools: fc.uniqueArray(fc.constantFrom('small', 'big', 'x'), { minLength: 1, maxLength: 2 }),
  servers: fc.array(
    fc.record({
      // Names drawn so that prefixes collide: kks-<cluster>-<pool>-<suffix>, with other clusters, extra segments, repeats.
      cluster: fc.constantFrom('k1', 'k1-small', 'k2', 'k1-small-x'),
      pool: fc.constantFrom('small', 'big', 'x', 'x-abcde'),
      suffix: fc.oneof(suffix, seg, fc.constant('dupes')),
      plainName: fc.option(fc.constantFrom('worker-1', 'worker-2'), { nil: undefined }),
      owner: fc.option(fc.constantFrom('uid-k1', 'uid-other'), { nil: undefined }),
      vmState: fc.constantFrom('active', 'active', 'error', 'building', 'stopped'),
      ageMin: fc.integer({ min: 0, max: 120 }),
      unknown: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
      tagged: fc.boolean(),
    }),
    { maxLength: 12 },
  ),
  nodeRefs: fc.array(fc.record({ server: fc.nat(20), byId: fc.boolean(), name: fc.option(fc.constantFrom('worker-1', 'worker-2'), { nil: undefined }) }), {
    maxLength: 8,
  }),
  budgets: fc.record({
    delete: fc.integer({ min: 0, max: 3 }),
    reboot: fc.integer({ min: 0, max: 3 }),
    metadata: fc.integer({ min: 0, max: 5 }),
    rule: fc.integer({ min: 0, max: 5 }),
  }),
  lastNodes: fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }),
});

type World = typeof world extends fc.Arbitrary<infer T> ? T : never;

function build(w: World) {
  const servers: ClusterInstance[] = w.servers.map((s, i) => ({
    id: `id-${i}`,
    name: s.unknown ? '' : (s.plainName ?? `kks-${s.cluster}-${s.pool}-${s.suffix}`),
    status: s.unknown ? 'UNKNOWN' : 'ACTIVE',
    addresses: s.unknown ? [] : [`10.0.0.${i + 1}`],
    createdMs: NOW - s.ageMin * MIN,
    vmState: s.unknown ? undefined : s.vmState,
    taskState: s.vmState === 'building' ? 'spawning' : null,
    powerState: s.vmState === 'stopped' ? 4 : 1,
    securityGroups: [],
    tags: s.tagged ? ['kubeward'] : [],
    metadata: (s.owner ? { [OWNER_METADATA_KEY]: s.owner } : {}) as Record<string, string>,
  }));
  const nodes: ClusterNode[] = w.nodeRefs.map((r, i) => {
    const target = servers[r.server % Math.max(1, servers.length)];
    return { name: r.name ?? target?.name ?? `node-${i}`, instanceId: r.byId ? target?.id : undefined, addresses: [], podCidrs: [] };
  });
  const o: FlightOptions = {
    clusterName: w.cluster,
    ownerId: 'uid-k1',
    clusterCidr: '100.100.0.0/16',
    securityGroupName: 'sg',
    pools: w.pools.map((p) => ({ name: p, prefix: `kks-${w.cluster}-${p}-` })),
    ...DEFAULT_FLIGHT_TIMING,
    rebootBeforeDelete: true,
    wantedRoles: [],
    forceSecurityGroupResync: false,
    repairMissingRoutes: false,
    routeLimit: 30,
    maxDeletionsPerRound: w.budgets.delete,
    maxRebootsPerRound: w.budgets.reboot,
    maxMetadataWritesPerRound: w.budgets.metadata,
    maxRuleChangesPerRound: w.budgets.rule,
  };
  return { servers, nodes, o };
}

/** Independent of cluster-identity.ts: what may prove a server is the cluster's. */
function provable(s: ClusterInstance, all: ClusterInstance[], nodes: ClusterNode[], o: FlightOptions): boolean {
  if (s.status === 'UNKNOWN') return false;
  const owner = s.metadata[OWNER_METADATA_KEY];
  if (owner !== undefined && owner !== 'uid-k1') return false;
  // A name of the pool grammar proves nothing: only a providerID or the cluster's own stamp here.
  const byId = nodes.some((n) => n.instanceId === s.id);
  if (!byId && owner !== 'uid-k1') return false;
  // A name several candidate servers carry proves nothing for any of them.
  const sameName = all.filter(
    (x) =>
      x.name === s.name &&
      x.name !== '' &&
      (nodes.some((n) => n.instanceId === x.id || n.name === x.name) ||
        x.metadata[OWNER_METADATA_KEY] === 'uid-k1' ||
        o.pools.some((p) => x.name.startsWith(p.prefix) && /^[a-z0-9]{5}$/.test(x.name.slice(p.prefix.length)))),
  );
  return sameName.length <= 1;
}

const targetOf = (a: FlightAction): string | undefined => ('instanceId' in a ? a.instanceId : undefined);

test('flight never acts on a server outside the proven set, never exceeds a budget, and destroys nothing on a doubtful view', () => {
  fc.assert(
    fc.property(world, (w) => {
      const { servers, nodes, o } = build(w);
      const ownership = proveOwnership(servers, nodes, { ownerId: 'uid-k1', poolPrefixes: o.pools.map((p) => p.prefix) });
      const proven = servers.filter((s) => ownership.proven.has(s.id));
      for (const s of proven) assert.ok(provable(s, servers, nodes, o), `proven without proof: ${s.name}`);
      const unknown = servers.filter((s) => s.status === 'UNKNOWN').length;
      const plan = decideFlight(
        {
          nowMs: NOW,
          instances: proven,
          candidates: ownership.candidates,
          unknownServers: unknown,
          duplicateNames: ownership.duplicateNames,
          nodes,
          groups: [],
          serviceUserRoles: undefined,
          routes: undefined,
          memory: { ...emptyFlightMemory(), lastNodeCount: w.lastNodes },
        },
        o,
      );
      const ids = new Set(proven.map((s) => s.id));
      for (const a of plan.actions) {
        const t = targetOf(a);
        if (t !== undefined) assert.ok(ids.has(t), `${a.kind} on unproven ${t}`);
      }
      const budgets = budgetsOf(o);
      const used = new Map<string, number>();
      for (const a of plan.actions) {
        const k = budgetKindOf(a);
        if (k) used.set(k, (used.get(k) ?? 0) + 1);
      }
      for (const [k, n] of used) assert.ok(n <= budgets[k as keyof typeof DEFAULT_BUDGETS], `${k}: ${n} > ${budgets[k as keyof typeof DEFAULT_BUDGETS]}`);
      const destructive = plan.actions.filter((a) => budgetKindOf(a) !== undefined);
      if (unknown > 0 || (nodes.length === 0 && proven.length > 0)) assert.deepEqual(destructive, [], 'doubtful view');
    }),
    { numRuns: 400 },
  );
});
