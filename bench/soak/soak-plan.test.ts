import { test } from 'node:test';
import assert from 'node:assert/strict';
import { faultAt, faultSchedule, secondHalf, slopePer10Min, type MemorySample } from './soak-plan.ts';

test('one fault per period, kinds and upstreams in turn, none overlapping or past the end', () => {
  const s = faultSchedule(120_000, 15_000, 3);
  assert.deepEqual(
    s.map((f) => [f.atMs, f.kind, f.upstream, f.forMs]),
    [
      [15_000, 'kill', 0, 7500],
      [30_000, 'hang', 1, 7500],
      [45_000, 'drain', 2, 7500],
      [60_000, 'reload', 0, 0],
      [75_000, 'kill', 1, 7500],
      [90_000, 'hang', 2, 7500],
      [105_000, 'drain', 0, 7500],
    ],
  );
  for (const [i, f] of s.entries()) if (i > 0) assert.ok(f.atMs >= s[i - 1]!.atMs + s[i - 1]!.forMs);
  assert.equal(faultAt(s, 15_000, 1000), 'none');
  assert.equal(faultAt(s, 15_000, 29_999), 'kill', 'recovery counts under the fault that caused it');
  assert.equal(faultAt(s, 15_000, 30_000), 'hang');
  assert.equal(faultSchedule(10_000, 15_000, 3).length, 0);
});

test('slope per 10 minutes by least squares; flat is 0; the second half skips warm-up', () => {
  const line = (perMin: number): MemorySample[] =>
    Array.from({ length: 13 }, (_, i) => ({ tMs: i * 10_000, rssBytes: 1000 + (perMin * i) / 6, anonBytes: 5, fds: 40 }));
  assert.ok(Math.abs(slopePer10Min(line(6), 'rssBytes') - 60) < 1e-9);
  assert.equal(slopePer10Min(line(6), 'fds'), 0);
  assert.equal(slopePer10Min([], 'fds'), 0);
  const warm: MemorySample[] = [
    { tMs: 0, rssBytes: 10, anonBytes: 0, fds: 0 },
    { tMs: 50, rssBytes: 90, anonBytes: 0, fds: 0 },
    { tMs: 60, rssBytes: 90, anonBytes: 0, fds: 0 },
    { tMs: 100, rssBytes: 90, anonBytes: 0, fds: 0 },
  ];
  assert.equal(slopePer10Min(secondHalf(warm, 100), 'rssBytes'), 0);
});
