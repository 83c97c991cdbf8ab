import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Upstream } from './upstream-list.ts';
import { latencyTier, pickUpstream } from './pick-upstream.ts';

function up(key: string, over: Partial<Upstream> = {}): Upstream {
  return {
    key,
    local: false,
    backup: false,
    state: 'up',
    drained: false,
    score: 2,
    latencyMs: 0.5,
    lastUpAt: 100,
    active: 0,
    evicted: false,
    slowStartFrom: undefined,
    joined: false,
    lastCheck: undefined,
    transitions: [],
    ...over,
  };
}

const cases: { name: string; pool: Upstream[]; tried?: string[]; want: string | undefined; failOpen?: boolean }[] = [
  { name: 'fewest active connections wins', pool: [up('a', { active: 3 }), up('b', { active: 1 }), up('c', { active: 2 })], want: 'b' },
  {
    name: 'on equal connections the lower latency tier wins',
    pool: [up('a', { latencyMs: 40 }), up('b', { latencyMs: 2 }), up('c', { latencyMs: 9 })],
    want: 'b',
  },
  { name: 'load beats latency', pool: [up('a', { latencyMs: 0.2, active: 2 }), up('b', { latencyMs: 50, active: 1 })], want: 'b' },
  {
    name: 'a local upstream is preferred when healthy, even with more connections',
    pool: [up('a', { active: 0 }), up('b', { local: true, active: 9 })],
    want: 'b',
  },
  { name: 'a local upstream that is down is not preferred', pool: [up('a'), up('b', { local: true, state: 'down' })], want: 'a' },
  { name: 'up ranks before unknown', pool: [up('a', { state: 'unknown' }), up('b', { active: 5 })], want: 'b' },
  { name: 'unknown upstreams are usable when nothing is up', pool: [up('a', { state: 'unknown' }), up('b', { state: 'down' })], want: 'a', failOpen: false },
  { name: 'drained upstreams get nothing', pool: [up('a', { drained: true }), up('b', { active: 9 })], want: 'b' },
  { name: 'upstreams already tried for this connection are skipped', pool: [up('a'), up('b', { active: 4 })], tried: ['a'], want: 'b' },
  {
    name: 'when all are down it fails open to the most recently up',
    pool: [up('a', { state: 'down', lastUpAt: 5 }), up('b', { state: 'down', lastUpAt: 50 }), up('c', { state: 'down', lastUpAt: undefined })],
    want: 'b',
    failOpen: true,
  },
  {
    name: 'fail-open goes on down the list as attempts fail',
    pool: [up('a', { state: 'down', lastUpAt: 5 }), up('b', { state: 'down', lastUpAt: 50 })],
    tried: ['b'],
    want: 'a',
    failOpen: true,
  },
  {
    name: 'fail-open never uses a drained upstream',
    pool: [up('a', { state: 'down', drained: true, lastUpAt: 99 }), up('b', { state: 'down', lastUpAt: 1 })],
    want: 'b',
    failOpen: true,
  },
  {
    name: 'a backup is not used while another upstream is usable, even unknown',
    pool: [up('a', { backup: true }), up('b', { state: 'unknown', active: 9 })],
    want: 'b',
  },
  { name: 'a backup is used before failing open', pool: [up('a', { state: 'down', lastUpAt: 99 }), up('b', { backup: true })], want: 'b', failOpen: false },
  {
    name: 'fail-open tries backups last',
    pool: [up('a', { state: 'down', backup: true, lastUpAt: 99 }), up('b', { state: 'down', lastUpAt: 1 })],
    want: 'b',
    failOpen: true,
  },
  { name: 'nothing left to try gives undefined', pool: [up('a', { drained: true }), up('b')], tried: ['b'], want: undefined },
];

for (const c of cases) {
  test(c.name, () => {
    const pick = pickUpstream(c.pool, new Set(c.tried ?? []), () => 0.5);
    assert.equal(pick?.key, c.want);
    if (c.failOpen !== undefined) assert.equal(pick?.failOpen, c.failOpen);
  });
}

test('ties are broken uniformly at random', () => {
  const pool = [up('a', { latencyMs: 0.2 }), up('b', { latencyMs: 0.7 }), up('c', { latencyMs: 0.4 })];
  const counts = new Map<string, number>();
  let seed = 1;
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  for (let i = 0; i < 3000; i++) {
    const k = pickUpstream(pool, new Set(), random)!.key;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  for (const k of ['a', 'b', 'c']) assert.ok(Math.abs(counts.get(k)! - 1000) < 150, `${k}: ${counts.get(k)}`);
});

test('latency tiers group nearby latencies and separate decades', () => {
  assert.deepEqual([undefined, 0.1, 0.9, 1, 2.9, 9, 29, 99, 299, 999, 5000].map(latencyTier), [0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7]);
});

function seeded(seed: number): () => number {
  return () => (seed = (seed * 16807) % 2147483647) / 2147483647;
}

test('a recovered upstream takes only its slow-start share of new connections, growing over the window', () => {
  const share = (elapsedMs: number): number => {
    // The recovered upstream has no connections, so least-connections alone would give it all of them.
    const pool = [up('a', { active: 20 }), up('b', { active: 20 }), up('r', { slowStartFrom: 0 })];
    const random = seeded(7);
    let toR = 0;
    for (let i = 0; i < 4000; i++) if (pickUpstream(pool, new Set(), random, { now: elapsedMs, slowStartMs: 30_000 })!.key === 'r') toR++;
    return toR / 4000;
  };
  const shares = [0, 7500, 15_000, 22_500, 30_000].map(share);
  assert.ok(Math.abs(shares[0]! - 0.1) < 0.03, `at 0 s: ${shares[0]}`);
  assert.ok(Math.abs(shares[1]! - 0.25) < 0.03, `at 7.5 s: ${shares[1]}`);
  assert.ok(Math.abs(shares[2]! - 0.5) < 0.03, `at 15 s: ${shares[2]}`);
  assert.ok(Math.abs(shares[3]! - 0.75) < 0.03, `at 22.5 s: ${shares[3]}`);
  assert.equal(shares[4], 1, 'after the window least-connections decides alone');
});

test('an upstream in slow start still takes a connection when nothing else is usable', () => {
  const pool = [up('a', { state: 'down' }), up('r', { slowStartFrom: 0 }), up('s', { backup: true })];
  for (let i = 0; i < 50; i++) assert.equal(pickUpstream(pool, new Set(), seeded(i + 1), { now: 0, slowStartMs: 30_000 })!.key, 'r');
});

test('without slow-start options the recovery time is ignored', () => {
  const pool = [up('a', { active: 20 }), up('r', { slowStartFrom: 0 })];
  assert.equal(pickUpstream(pool, new Set(), () => 0.99)!.key, 'r');
});
