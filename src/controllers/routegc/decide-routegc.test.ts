import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SUSPECT_MAX_AGE_MS, decideRouteGc, ownRoutes, type RouteGcInput, type RouteGcMemory } from './decide-routegc.ts';
import { routeKey } from '../managed-cluster/cluster-view.ts';
import { inst, node, r } from '../managed-cluster/cluster-fixtures.test-helpers.ts';

const OPTS = { clusterCidr: '100.100.0.0/16', routeLimit: 30 };
const fresh: RouteGcMemory = { suspects: {} };
/** No port on the router's networks holds any address. */
const NONE_HELD: ReadonlySet<string> = new Set();

/** Runs the decision twice on the same observation, as two cycles would. */
function twoCycles(input: Omit<RouteGcInput, 'memory' | 'heldHops'> & { heldHops?: ReadonlySet<string> }, opts = OPTS) {
  const first = decideRouteGc({ heldHops: NONE_HELD, ...input, memory: fresh }, opts);
  const second = decideRouteGc({ heldHops: NONE_HELD, ...input, memory: first.memory }, opts);
  return { first, second };
}

const keys = (fs: { route: { destination: string; nexthop: string } }[]) => fs.map((f) => `${f.route.destination}>${f.route.nexthop}`);

test('R1: only the in-CIDR route with an unknown next hop is orphaned; wider and foreign prefixes are never ours', () => {
  const input = {
    routes: [
      r('100.100.1.0/24', '10.0.0.11'),
      r('100.100.2.0/24', '10.0.0.99'),
      r('100.100.3.0/24', '172.24.4.5'),
      r('10.200.0.0/16', '10.0.0.99'),
      r('100.100.0.0/15', '10.0.0.99'),
    ],
    instances: [inst('s1', ['10.0.0.11']), inst('s2', ['10.0.0.12', '172.24.4.5'])],
    nodes: [node('s1', ['10.0.0.11']), node('s2', ['10.0.0.12'])],
  };
  const { first, second } = twoCycles(input);
  assert.deepEqual(keys(first.pending), ['100.100.2.0/24>10.0.0.99'], 'first sighting waits');
  assert.deepEqual(first.remove, []);
  assert.deepEqual(keys(second.remove), ['100.100.2.0/24>10.0.0.99'], 'second sighting removes');
  assert.deepEqual(second.counts, { seen: 5, ours: 3, orphaned: 1, duplicate: 0 });
});

test('a first sighting older than the suspect age counts as none: after a long outage one fresh look only suspects again', () => {
  const input = {
    heldHops: NONE_HELD,
    routes: [r('100.100.1.0/24', '10.0.0.11'), r('100.100.2.0/24', '10.0.0.99')],
    instances: [inst('s1', ['10.0.0.11'])],
    nodes: [node('s1', ['10.0.0.11'])],
  };
  const first = decideRouteGc({ ...input, nowMs: 0, memory: fresh }, OPTS);
  assert.deepEqual(keys(first.pending), ['100.100.2.0/24>10.0.0.99']);
  const late = decideRouteGc({ ...input, nowMs: SUSPECT_MAX_AGE_MS + 1, memory: first.memory }, OPTS);
  assert.deepEqual([late.remove, keys(late.pending)], [[], ['100.100.2.0/24>10.0.0.99']], 'pending again, not removed');
  assert.equal(late.memory.suspects[routeKey(r('100.100.2.0/24', '10.0.0.99'))], SUSPECT_MAX_AGE_MS + 1, 'first seen anew');
  const inTime = decideRouteGc({ ...input, nowMs: SUSPECT_MAX_AGE_MS, memory: first.memory }, OPTS);
  assert.deepEqual(keys(inTime.remove), ['100.100.2.0/24>10.0.0.99'], 'a second sighting within the age confirms');
  const longConfirm = { ...OPTS, confirmAfterMs: SUSPECT_MAX_AGE_MS };
  const slow = decideRouteGc({ ...input, nowMs: 2 * SUSPECT_MAX_AGE_MS, memory: first.memory }, longConfirm);
  assert.deepEqual(keys(slow.remove), ['100.100.2.0/24>10.0.0.99'], 'a --confirm-after near the age stretches it to three times itself');
});

test('R2: a router without routes of the cluster gives nothing to do and keeps the instance count it had', () => {
  const d = decideRouteGc(
    {
      heldHops: NONE_HELD,
      routes: [r('10.200.0.0/16', '10.0.0.99')],
      instances: [],
      nodes: [node('n', ['10.0.0.1'])],
      memory: { suspects: { x: 0 }, lastInstanceCount: 4 },
    },
    OPTS,
  );
  assert.equal(d.refusal, undefined, 'no cluster routes: the empty list is not looked at');
  assert.deepEqual([d.remove, d.pending, d.memory], [[], [], { suspects: {}, lastInstanceCount: 4 }]);
});

test('R5: of two routes for one pod CIDR, the one not reaching the Node that owns it goes after two cycles', () => {
  const input = {
    routes: [r('100.100.4.0/24', '10.0.0.11'), r('100.100.4.0/24', '10.0.0.12')],
    instances: [inst('id-1', ['10.0.0.11'], { name: 's1' }), inst('id-2', ['10.0.0.12'], { name: 's2' })],
    nodes: [node('s1', ['10.0.0.11'], ['100.100.1.0/24'], 'id-1'), node('s2', ['10.0.0.12'], ['100.100.4.0/24'], 'id-2')],
  };
  const { first, second } = twoCycles(input);
  assert.deepEqual(keys(first.pending), ['100.100.4.0/24>10.0.0.11']);
  assert.deepEqual(keys(second.remove), ['100.100.4.0/24>10.0.0.11']);
  assert.equal(second.remove[0]!.reason, 'duplicate');
  assert.equal(second.counts.duplicate, 1);
});

test('duplicates nobody can settle are reported, not removed', () => {
  const cases = [
    { name: 'no Node owns the pod CIDR', nodes: [node('s1', ['10.0.0.11']), node('s2', ['10.0.0.12'])], why: /no Node owns/ },
    {
      name: 'the owner is reached by neither route',
      nodes: [node('s1', ['10.0.0.11']), node('s2', ['10.0.0.12']), node('s3', ['10.0.0.13'], ['100.100.4.0/24'])],
      why: /none of the next hops is Node s3/,
    },
  ];
  for (const c of cases) {
    const input = {
      routes: [r('100.100.4.0/24', '10.0.0.11'), r('100.100.4.0/24', '10.0.0.12')],
      instances: [inst('s1', ['10.0.0.11']), inst('s2', ['10.0.0.12']), inst('s3', ['10.0.0.13'])],
      nodes: c.nodes,
    };
    const { second } = twoCycles(input);
    assert.deepEqual(second.remove, [], c.name);
    assert.equal(second.unresolved.length, 2, c.name);
    assert.match(second.unresolved[0]!.detail, c.why, c.name);
  }
});

test('an orphan and a live route for one destination: the orphan goes as orphaned, no duplicate is left to settle', () => {
  const { second } = twoCycles({
    routes: [r('100.100.4.0/24', '10.0.0.11'), r('100.100.4.0/24', '10.0.0.99')],
    instances: [inst('s1', ['10.0.0.11'])],
    nodes: [node('s1', ['10.0.0.11'])],
  });
  assert.deepEqual(keys(second.remove), ['100.100.4.0/24>10.0.0.99']);
  assert.equal(second.remove[0]!.reason, 'orphaned');
  assert.deepEqual(second.unresolved, []);
});

test('R7: an empty instance list while Nodes exist refuses the cycle and forgets earlier suspicions', () => {
  const d = decideRouteGc(
    {
      heldHops: NONE_HELD,
      routes: [r('100.100.1.0/24', '10.0.0.11')],
      instances: [],
      nodes: [node('s1', ['10.0.0.11'])],
      memory: { suspects: { '100.100.1.0/24>x': 0 }, lastInstanceCount: 3 },
    },
    OPTS,
  );
  assert.match(d.refusal ?? '', /empty while 1 Node/);
  assert.deepEqual([d.remove, d.pending, d.memory.suspects], [[], [], {}]);
});

test('a shrink that persists is accepted one cycle after the refusal, then needs two sightings again', () => {
  const routes = [r('100.100.1.0/24', '10.0.0.11'), r('100.100.9.0/24', '10.0.0.19')];
  const nodes = [node('s1', ['10.0.0.11'])];
  const big = Array.from({ length: 10 }, (_, i) => inst(`s${i + 1}`, [`10.0.0.${11 + i}`]));
  let memory: RouteGcMemory = { suspects: {}, lastInstanceCount: big.length };
  const small = [big[0]!];
  const refused = decideRouteGc({ heldHops: NONE_HELD, routes, instances: small, nodes, memory }, OPTS);
  assert.ok(refused.refusal);
  memory = refused.memory;
  const next = decideRouteGc({ heldHops: NONE_HELD, routes, instances: small, nodes, memory }, OPTS);
  assert.equal(next.refusal, undefined);
  assert.deepEqual(keys(next.pending), ['100.100.9.0/24>10.0.0.19']);
  const last = decideRouteGc({ heldHops: NONE_HELD, routes, instances: small, nodes, memory: next.memory }, OPTS);
  assert.deepEqual(keys(last.remove), ['100.100.9.0/24>10.0.0.19']);
});

test('an orphan that disappears or recovers between cycles is not removed', () => {
  const routes = [r('100.100.2.0/24', '10.0.0.12')];
  const nodes = [node('s1', ['10.0.0.11'])];
  const first = decideRouteGc({ heldHops: NONE_HELD, routes, instances: [inst('s1', ['10.0.0.11'])], nodes, memory: fresh }, OPTS);
  assert.equal(first.pending.length, 1);
  const recovered = decideRouteGc(
    { heldHops: NONE_HELD, routes, instances: [inst('s1', ['10.0.0.11']), inst('s2', ['10.0.0.12'])], nodes, memory: first.memory },
    OPTS,
  );
  assert.deepEqual([recovered.remove, recovered.pending, recovered.memory.suspects], [[], [], {}]);
});

test("next hops resolve against Node addresses too, unless the Node's providerID names a server that is gone", () => {
  const routes = [r('100.100.1.0/24', '10.0.0.21'), r('100.100.2.0/24', '10.0.0.22')];
  const nodes = [node('bare-metal', ['10.0.0.21']), node('gone', ['10.0.0.22'], [], 'deleted-uuid'), node('s1', ['10.0.0.11'])];
  const { second } = twoCycles({ routes, instances: [inst('s1', ['10.0.0.11'])], nodes });
  assert.deepEqual(keys(second.remove), ['100.100.2.0/24>10.0.0.22']);
});

test('IPv6 cluster CIDRs and next hops in other spellings are handled by value', () => {
  const opts = { clusterCidr: 'fd00:100::/56', routeLimit: 30 };
  const routes = [r('fd00:100:0:1::/64', 'fd00::0:11'), r('fd00:100:0:2::/64', 'fd00::99'), r('fd00:200::/64', 'fd00::99')];
  const { second } = twoCycles({ routes, instances: [inst('s1', ['fd00::11'])], nodes: [node('s1', ['fd00::11'])] }, opts);
  assert.deepEqual(keys(second.remove), ['fd00:100:0:2::/64>fd00::99']);
});

test('the route-limit warning starts when fewer than the headroom are left', () => {
  const routes = (n: number) => Array.from({ length: n }, (_, i) => r(`100.100.${i}.0/24`, '10.0.0.11'));
  const run = (n: number, limit: number) =>
    decideRouteGc({ heldHops: NONE_HELD, routes: routes(n), instances: [inst('s1', ['10.0.0.11'])], nodes: [], memory: fresh }, { ...OPTS, routeLimit: limit })
      .routeLimit;
  assert.deepEqual(run(26, 30), { count: 26, limit: 30, approaching: false });
  assert.deepEqual(run(27, 30), { count: 27, limit: 30, approaching: true });
  assert.equal(run(27, 100).approaching, false, 'a raised limit is honoured');
});

test('memory keys survive Neutron reordering; a bad or too wide cluster CIDR refuses the cycle', () => {
  assert.equal(routeKey(r('100.100.1.0/24', 'fd00::1')), routeKey(r('100.100.1.0/24', 'fd00:0::1')));
  for (const cidr of ['', '0.0.0.0/0', '::/0', '10.0.0.0/7']) {
    const d = decideRouteGc(
      { heldHops: NONE_HELD, routes: [r('100.100.1.0/24', '10.0.0.99')], instances: [], nodes: [], memory: fresh },
      { clusterCidr: cidr, routeLimit: 30 },
    );
    assert.equal(d.refusalCode, 'ClusterCIDRRefused', cidr);
  }
  assert.equal(
    decideRouteGc({ heldHops: NONE_HELD, routes: [], instances: [], nodes: [], memory: fresh }, { clusterCidr: '10.0.0.0/7', routeLimit: 30, allowWide: true })
      .refusal,
    undefined,
  );
  assert.throws(() => ownRoutes([], '0.0.0.0/0', { allowWide: true }), /whole address space/);
});

test('termination clean-up takes every route inside the cluster CIDR and nothing else', () => {
  const routes = [r('100.100.1.0/24', '10.0.0.11'), r('10.200.0.0/16', '10.0.0.99'), r('100.100.0.0/15', '10.0.0.99'), r('100.100.2.0/24', '10.0.0.99')];
  assert.deepEqual(
    ownRoutes(routes, '100.100.0.0/16').map((x) => x.destination),
    ['100.100.1.0/24', '100.100.2.0/24'],
  );
});
