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
    version: undefined,
    paceTokens: undefined,
    paceAt: undefined,
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

test('a recovered upstream holds its slow-start share of the connections, growing over the window', () => {
  // Every pick opens a connection that stays (watches, keep-alive clients): weighted least
  // connections settles the recovered upstream at its share of a full peer's connections.
  const settle = (elapsedMs: number): number => {
    const pool = [up('a', { active: 20 }), up('b', { active: 20 }), up('r', { slowStartFrom: 0 })];
    const random = seeded(7);
    for (let i = 0; i < 400; i++) {
      const pick = pickUpstream(pool, new Set(), random, { now: elapsedMs, slowStartMs: 30_000 })!;
      pool.find((u) => u.key === pick.key)!.active++;
    }
    const [a, b, r] = pool.map((u) => u.active) as [number, number, number];
    return r / ((a + b) / 2);
  };
  const ratios = [0, 7500, 15_000, 22_500, 30_000].map(settle);
  for (const [i, want] of [0.1, 0.25, 0.5, 0.75, 1].entries()) assert.ok(Math.abs(ratios[i]! - want) < 0.03, `at share ${want}: ${ratios[i]}`);
});

test('with connections that end at once, a recovered upstream takes its weighted part of the picks', () => {
  // Nobody holds a connection (one-shot requests): every pick is a tie on load, broken by weight.
  const pool = [up('a'), up('b'), up('r', { slowStartFrom: 0 })];
  const random = seeded(11);
  let toR = 0;
  for (let i = 0; i < 6000; i++) if (pickUpstream(pool, new Set(), random, { now: 3000, slowStartMs: 30_000 })!.key === 'r') toR++;
  const want = 0.1 / 2.1;
  assert.ok(Math.abs(toR / 6000 - want) < 0.015, `r took ${toR / 6000}, want about ${want}`);
});

test('slow start never hands the pool to a hung peer that piles up connections', () => {
  // One upstream killed, one 8 s into a 30 s slow start, the third hung: every connection sent to
  // the hung one stays open (no answer comes), the slow-starting one's one-shot requests finish.
  // With the share applied as a coin toss the hung one took 72 % of these picks.
  const pool = [up('killed', { state: 'down' }), up('starting', { slowStartFrom: 0, active: 5 }), up('hung', { active: 5 })];
  const random = seeded(3);
  let toHung = 0;
  for (let i = 0; i < 322; i++) {
    const pick = pickUpstream(pool, new Set(), random, { now: 8000, slowStartMs: 30_000 })!;
    if (pick.key === 'hung') {
      toHung++;
      pool[2]!.active++;
    }
  }
  assert.ok(toHung <= 20, `the hung upstream took ${toHung} of 322 new connections`);
  // Without slow start, least connections alone: the same picture.
  const plain = [up('starting', { active: 5 }), up('hung', { active: 5 })];
  let plainToHung = 0;
  for (let i = 0; i < 322; i++) {
    if (pickUpstream(plain, new Set(), random)!.key === 'hung') {
      plainToHung++;
      plain[1]!.active++;
    }
  }
  assert.ok(toHung <= plainToHung + 18, `slow start added ${toHung - plainToHung} picks to the hung upstream`);
});

test('an upstream in slow start still takes a connection when nothing else is usable', () => {
  const pool = [up('a', { state: 'down' }), up('r', { slowStartFrom: 0 }), up('s', { backup: true })];
  for (let i = 0; i < 50; i++) assert.equal(pickUpstream(pool, new Set(), seeded(i + 1), { now: 0, slowStartMs: 30_000 })!.key, 'r');
});

test('without slow-start options the recovery time is ignored', () => {
  const pool = [up('a', { active: 20 }), up('r', { slowStartFrom: 0 })];
  assert.equal(pickUpstream(pool, new Set(), () => 0.99)!.key, 'r');
});

test('recovery pacing: an upstream with no token sits the pick out while a peer is usable', () => {
  const pace = { ratePerSec: 100, burst: 5 };
  const pool = [up('a', { active: 50 }), up('r', { slowStartFrom: 0, paceTokens: 0, paceAt: 1000 })];
  const opts = { now: 1000, slowStartMs: 30_000, pace };
  assert.deepEqual(pickUpstream(pool, new Set(), seeded(1), opts), { key: 'a', failOpen: false });
  // 10 ms later a token is there, and weighted least connections prefers r (0 active).
  assert.deepEqual(pickUpstream(pool, new Set(), seeded(1), { ...opts, now: 1010 }), { key: 'r', failOpen: false });
});

test('recovery pacing: when nothing else of its rank is usable the pick says how long to wait', () => {
  const pace = { ratePerSec: 100, burst: 5 };
  const pool = [up('down', { state: 'down' }), up('r', { slowStartFrom: 0, paceTokens: -0.5, paceAt: 1000 }), up('spare', { backup: true })];
  assert.deepEqual(pickUpstream(pool, new Set(), seeded(1), { now: 1000, slowStartMs: 30_000, pace }), { key: 'r', failOpen: false, waitMs: 15 });
  // After the slow-start window the bucket no longer applies.
  assert.deepEqual(pickUpstream(pool, new Set(), seeded(1), { now: 40_000, slowStartMs: 30_000, pace }), { key: 'r', failOpen: false });
});

test('version skew: an upstream older than the kubelet gets no connection while a newer one is up', () => {
  const minVersion = { major: 1, minor: 31 };
  const pool = [
    up('old', { version: { major: 1, minor: 30 } }),
    up('new', { version: { major: 1, minor: 31 }, active: 40 }),
    up('newer', { version: { major: 2, minor: 0 }, active: 60 }),
  ];
  const random = seeded(5);
  const counts = new Map<string, number>();
  for (let i = 0; i < 500; i++) {
    const key = pickUpstream(pool, new Set(), random, { now: 0, slowStartMs: 0, minVersion })!.key;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  assert.equal(counts.get('old'), undefined, 'the older one, though it has no connections, took none');
  // Newer but not yet checked (unknown) does not beat an older one that is up: HA first.
  const waiting = [up('old', { version: { major: 1, minor: 30 } }), up('new', { state: 'unknown', version: { major: 1, minor: 31 } })];
  assert.equal(pickUpstream(waiting, new Set(), random, { now: 0, slowStartMs: 0, minVersion })!.key, 'old');
});

test('version skew: with only older upstreams up, they still serve (no loss of HA), and an unknown version is never older', () => {
  const minVersion = { major: 1, minor: 31 };
  const pool = [
    up('new', { state: 'down', version: { major: 1, minor: 31 } }),
    up('old1', { version: { major: 1, minor: 30 }, active: 3 }),
    up('old2', { version: { major: 1, minor: 30 } }),
  ];
  assert.deepEqual(pickUpstream(pool, new Set(), seeded(1), { now: 0, slowStartMs: 0, minVersion }), { key: 'old2', failOpen: false });
  assert.deepEqual(pickUpstream(pool, new Set(['old2']), seeded(1), { now: 0, slowStartMs: 0, minVersion }), { key: 'old1', failOpen: false });
  const unknown = [up('old', { version: { major: 1, minor: 30 } }), up('unread', { active: 9 })];
  assert.equal(pickUpstream(unknown, new Set(), seeded(1), { now: 0, slowStartMs: 0, minVersion })!.key, 'unread');
});
