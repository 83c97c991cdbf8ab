import { test } from 'node:test';
import assert from 'node:assert/strict';
import { msUntilToken, refillBucket, takeToken, tokensAt, type PaceBucket } from './recovery-pace.ts';

const pace = { ratePerSec: 100, burst: 20 };

test('a fresh bucket is full, and refills at the rate up to the burst', () => {
  const b: PaceBucket = { paceTokens: undefined, paceAt: undefined };
  assert.equal(tokensAt(b, 0, pace), 20);
  for (let i = 0; i < 20; i++) takeToken(b, 0, pace);
  assert.equal(tokensAt(b, 0, pace), 0);
  assert.equal(msUntilToken(b, 0, pace), 10, 'one token per 10 ms at 100/s');
  assert.equal(tokensAt(b, 50, pace), 5);
  assert.equal(tokensAt(b, 10_000, pace), 20, 'never above the burst');
  refillBucket(b);
  assert.equal(tokensAt(b, 0, pace), 20);
});

test('a connection taken past the pace leaves a debt that the next ones wait out', () => {
  const b: PaceBucket = { paceTokens: 0, paceAt: 0 };
  takeToken(b, 0, pace); // a client that waited its longest and connected anyway
  assert.equal(msUntilToken(b, 0, pace), 20);
});

test('simulated: 500 clients reconnecting at once to a lone recovered upstream arrive at the rate, none refused', () => {
  // A discrete-event replay of the frontend's loop: a client whose pick says wait comes back after
  // waitMs; every other one spends a token and connects.
  const b: PaceBucket = { paceTokens: undefined, paceAt: undefined };
  const queue: number[] = Array(500).fill(0);
  const connectedAt: number[] = [];
  while (queue.length) {
    queue.sort((x, y) => x - y);
    const now = queue.shift()!;
    const wait = msUntilToken(b, now, pace);
    if (wait > 0) queue.push(now + wait);
    else {
      takeToken(b, now, pace);
      connectedAt.push(now);
    }
  }
  assert.equal(connectedAt.length, 500);
  const last = Math.max(...connectedAt);
  assert.ok(Math.abs(last - 4800) <= 20, `the last one connected at ${last} ms: (500 - burst 20) / 100 per s`);
  for (let from = 0; from < last; from += 100) {
    const n = connectedAt.filter((t) => t >= from && t < from + 1000).length;
    assert.ok(n <= 20 + 100 + 1, `${n} connections in the second from ${from} ms`);
  }
});
