import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Upstream } from './upstream-list.ts';
import { latencyTier, pickUpstream } from './pick-upstream.ts';

function up(key: string, over: Partial<Upstream> = {}): Upstream {
  return { key, local: false, state: 'up', drained: false, score: 2, latencyMs: 0.5, lastUpAt: 100, active: 0, evicted: false, lastCheck: undefined, transitions: [], ...over };
}

const cases: { name: string; pool: Upstream[]; tried?: string[]; want: string | undefined; failOpen?: boolean }[] = [
  { name: 'fewest active connections wins', pool: [up('a', { active: 3 }), up('b', { active: 1 }), up('c', { active: 2 })], want: 'b' },
  { name: 'on equal connections the lower latency tier wins', pool: [up('a', { latencyMs: 40 }), up('b', { latencyMs: 2 }), up('c', { latencyMs: 9 })], want: 'b' },
  { name: 'load beats latency', pool: [up('a', { latencyMs: 0.2, active: 2 }), up('b', { latencyMs: 50, active: 1 })], want: 'b' },
  { name: 'a local upstream is preferred when healthy, even with more connections', pool: [up('a', { active: 0 }), up('b', { local: true, active: 9 })], want: 'b' },
  { name: 'a local upstream that is down is not preferred', pool: [up('a'), up('b', { local: true, state: 'down' })], want: 'a' },
  { name: 'up ranks before unknown', pool: [up('a', { state: 'unknown' }), up('b', { active: 5 })], want: 'b' },
  { name: 'unknown upstreams are usable when nothing is up', pool: [up('a', { state: 'unknown' }), up('b', { state: 'down' })], want: 'a', failOpen: false },
  { name: 'drained upstreams get nothing', pool: [up('a', { drained: true }), up('b', { active: 9 })], want: 'b' },
  { name: 'upstreams already tried for this connection are skipped', pool: [up('a'), up('b', { active: 4 })], tried: ['a'], want: 'b' },
  { name: 'when all are down it fails open to the most recently up', pool: [up('a', { state: 'down', lastUpAt: 5 }), up('b', { state: 'down', lastUpAt: 50 }), up('c', { state: 'down', lastUpAt: undefined })], want: 'b', failOpen: true },
  { name: 'fail-open goes on down the list as attempts fail', pool: [up('a', { state: 'down', lastUpAt: 5 }), up('b', { state: 'down', lastUpAt: 50 })], tried: ['b'], want: 'a', failOpen: true },
  { name: 'fail-open never uses a drained upstream', pool: [up('a', { state: 'down', drained: true, lastUpAt: 99 }), up('b', { state: 'down', lastUpAt: 1 })], want: 'b', failOpen: true },
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
  const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  for (let i = 0; i < 3000; i++) {
    const k = pickUpstream(pool, new Set(), random)!.key;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  for (const k of ['a', 'b', 'c']) assert.ok(Math.abs(counts.get(k)! - 1000) < 150, `${k}: ${counts.get(k)}`);
});

test('latency tiers group nearby latencies and separate decades', () => {
  assert.deepEqual([undefined, 0.1, 0.9, 1, 2.9, 9, 29, 99, 299, 999, 5000].map(latencyTier), [0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7]);
});
