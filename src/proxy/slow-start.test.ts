import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isSlowStarting, MIN_SLOW_START_SHARE, slowStartShare } from './slow-start.ts';

const cases: { name: string; since: number | undefined; now: number; slowStartMs: number; share: number }[] = [
  { name: 'an upstream that never recovered takes its full share', since: undefined, now: 5000, slowStartMs: 30_000, share: 1 },
  { name: 'slow start off (0) gives the full share at once', since: 1000, now: 1000, slowStartMs: 0, share: 1 },
  { name: 'right after recovery the share is the floor, not zero', since: 1000, now: 1000, slowStartMs: 30_000, share: MIN_SLOW_START_SHARE },
  { name: 'the share stays at the floor while the ramp is below it', since: 0, now: 2000, slowStartMs: 30_000, share: MIN_SLOW_START_SHARE },
  { name: 'half way through the share is one half', since: 0, now: 15_000, slowStartMs: 30_000, share: 0.5 },
  { name: 'three quarters through it is three quarters', since: 10_000, now: 32_500, slowStartMs: 30_000, share: 0.75 },
  { name: 'at the end of the window the share is full', since: 0, now: 30_000, slowStartMs: 30_000, share: 1 },
  { name: 'long after the window the share is full', since: 0, now: 999_999, slowStartMs: 30_000, share: 1 },
];

for (const c of cases) {
  test(c.name, () => {
    assert.equal(slowStartShare(c.since, c.now, c.slowStartMs), c.share);
    assert.equal(isSlowStarting(c.since, c.now, c.slowStartMs), c.share < 1);
  });
}
