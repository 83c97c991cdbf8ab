import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planCloseDelays } from './plan-close-delays.ts';

const cases: { name: string; count: number; spreadMs: number; random: () => number; want: number[] }[] = [
  { name: 'no connections, no delays', count: 0, spreadMs: 5000, random: Math.random, want: [] },
  { name: 'a zero spread closes everything at once', count: 3, spreadMs: 0, random: Math.random, want: [0, 0, 0] },
  { name: 'each connection closes inside its own slot of the window', count: 4, spreadMs: 4000, random: () => 0.5, want: [500, 1500, 2500, 3500] },
  { name: 'even the most extreme random values stay inside the window', count: 2, spreadMs: 1000, random: () => 0.999999, want: [499, 999] },
];

for (const c of cases) {
  test(c.name, () => assert.deepEqual(planCloseDelays(c.count, c.spreadMs, c.random), c.want));
}

test('with a real random source the closes cover the window without a burst', () => {
  const delays = planCloseDelays(50, 5000).sort((a, b) => a - b);
  // The first falls in the first 100 ms slot and the last in the last one, whatever the draws.
  assert.ok(delays[0]! < 100 && delays.at(-1)! >= 4900 && delays.at(-1)! < 5000, 'spans the window');
  for (let i = 2; i < delays.length; i++) assert.ok(delays[i]! - delays[i - 2]! > 0, 'never three in the same millisecond');
});
