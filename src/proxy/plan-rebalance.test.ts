import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MAX_ROUNDS_WITHOUT_QUIET, pickConnectionToMove, planRebalance, type RebalanceDecision } from './plan-rebalance.ts';
import type { Upstream } from './upstream-list.ts';

function up(key: string, active: number, over: Partial<Upstream> = {}): Upstream {
  return {
    key,
    local: false,
    backup: false,
    state: 'up',
    drained: false,
    score: 2,
    latencyMs: 1,
    lastUpAt: 0,
    active,
    evicted: false,
    slowStartFrom: undefined,
    version: undefined,
    paceTokens: undefined,
    paceAt: undefined,
    joined: false,
    lastCheck: undefined,
    transitions: [],
    ...over,
  };
}

const policy = { thresholdConnections: 2, now: 100_000, slowStartMs: 30_000 };
const allSettled = (pool: Upstream[]) => (key: string) => pool.find((u) => u.key === key)!.active;

const cases: { name: string; pool: Upstream[]; settled?: (key: string) => number; want: RebalanceDecision }[] = [
  {
    name: 'a recovered upstream with no connections takes one off the busiest',
    pool: [up('a', 10), up('b', 12), up('c', 0)],
    want: { action: 'close', from: 'b', to: 'c', spread: 12 },
  },
  { name: 'a spread equal to the threshold is left alone', pool: [up('a', 5), up('b', 3), up('c', 4)], want: { action: 'none', why: 'balanced' } },
  { name: 'a spread one above the threshold moves one', pool: [up('a', 6), up('b', 3)], want: { action: 'close', from: 'a', to: 'b', spread: 3 } },
  {
    name: 'down upstreams do not count as underloaded',
    pool: [up('a', 9), up('b', 9), up('c', 0, { state: 'down' })],
    want: { action: 'none', why: 'balanced' },
  },
  { name: 'unknown upstreams do not count yet', pool: [up('a', 9), up('b', 0, { state: 'unknown' })], want: { action: 'none', why: 'too-few-upstreams' } },
  { name: 'drained upstreams do not count', pool: [up('a', 9), up('b', 0, { drained: true })], want: { action: 'none', why: 'too-few-upstreams' } },
  { name: 'backups do not count', pool: [up('a', 9), up('b', 0, { backup: true })], want: { action: 'none', why: 'too-few-upstreams' } },
  {
    name: 'with a healthy local upstream only the local ones are compared',
    pool: [up('a', 9, { local: true }), up('b', 0)],
    want: { action: 'none', why: 'too-few-upstreams' },
  },
  {
    name: 'nothing moves while an upstream is still in slow start',
    pool: [up('a', 9), up('b', 0, { slowStartFrom: 90_000 })],
    want: { action: 'none', why: 'slow-start' },
  },
  {
    name: 'once its slow start is over it is filled',
    pool: [up('a', 9), up('b', 0, { slowStartFrom: 60_000 })],
    want: { action: 'close', from: 'a', to: 'b', spread: 9 },
  },
  {
    name: 'nothing moves when the busiest has only young connections',
    pool: [up('a', 9), up('b', 0)],
    settled: () => 0,
    want: { action: 'none', why: 'balanced' },
  },
  { name: 'a single upstream has nothing to balance against', pool: [up('a', 50)], want: { action: 'none', why: 'too-few-upstreams' } },
];

for (const c of cases) {
  test(c.name, () => {
    assert.deepEqual(planRebalance(c.pool, c.settled ?? allSettled(c.pool), policy), c.want);
  });
}

test('moving connections one at a time converges and then stops', () => {
  const pool = [up('a', 15), up('b', 15), up('c', 0)];
  let closes = 0;
  for (let i = 0; i < 100; i++) {
    const d = planRebalance(pool, allSettled(pool), policy);
    if (d.action === 'none') break;
    closes++;
    pool.find((u) => u.key === d.from)!.active--;
    pool.find((u) => u.key === d.to)!.active++; // the client reconnects to the least loaded
  }
  assert.deepEqual(
    pool.map((u) => u.active),
    [10, 11, 9],
    'within the threshold of 2',
  );
  assert.equal(closes, 9, 'exactly the moves needed, no churn after');
  assert.deepEqual(planRebalance(pool, allSettled(pool), policy), { action: 'none', why: 'balanced' });
});

test('the connection to move: the oldest quiet both ways, else the oldest with a quiet client, else wait', () => {
  const c = (clientQuiet: boolean, upstreamQuiet: boolean) => ({ clientQuiet, upstreamQuiet });
  assert.equal(pickConnectionToMove([c(false, false), c(true, false), c(true, true), c(true, true)], 0), 2);
  assert.equal(pickConnectionToMove([c(false, true), c(true, false), c(true, false)], 0), 1);
  assert.equal(pickConnectionToMove([c(false, true), c(false, false)], 0), 'wait');
  assert.equal(pickConnectionToMove([c(false, true), c(false, false)], MAX_ROUNDS_WITHOUT_QUIET - 1), 'wait');
  assert.equal(pickConnectionToMove([c(false, true), c(false, false)], MAX_ROUNDS_WITHOUT_QUIET), 0, 'late, the oldest busy one');
  assert.equal(pickConnectionToMove([], MAX_ROUNDS_WITHOUT_QUIET), 'wait');
});

test('property: a connection whose client sends is picked only when none has a quiet client and the wait is over', () => {
  fc.assert(
    fc.property(fc.array(fc.record({ clientQuiet: fc.boolean(), upstreamQuiet: fc.boolean() }), { maxLength: 20 }), fc.nat(60), (cands, rounds) => {
      const pick = pickConnectionToMove(cands, rounds);
      if (pick === 'wait') {
        assert.ok(cands.every((x) => !x.clientQuiet) && (cands.length === 0 || rounds < MAX_ROUNDS_WITHOUT_QUIET));
        return;
      }
      const chosen = cands[pick]!;
      if (!chosen.clientQuiet) assert.ok(cands.every((x) => !x.clientQuiet) && rounds >= MAX_ROUNDS_WITHOUT_QUIET && pick === 0);
      if (!chosen.upstreamQuiet) assert.ok(cands.every((x) => !(x.clientQuiet && x.upstreamQuiet)));
      // The quietest kind wins, and the oldest of it.
      const rank = (x: { clientQuiet: boolean; upstreamQuiet: boolean }) => (x.clientQuiet ? (x.upstreamQuiet ? 0 : 1) : 2);
      assert.ok(cands.every((x, i) => rank(x) > rank(chosen) || (rank(x) === rank(chosen) && i >= pick)));
    }),
  );
});
