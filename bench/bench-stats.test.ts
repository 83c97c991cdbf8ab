import { test } from 'node:test';
import assert from 'node:assert/strict';
import { measureAgain, median, mediansOf, peerOrder, ratio } from './bench-stats.ts';

test('the median of an odd count is the middle value, whatever the order', () => {
  assert.equal(median([9, 1, 5]), 5);
});

test('the median of an even count is the mean of the two middle values', () => {
  assert.equal(median([4, 1, 3, 2]), 2.5);
});

test('the median ignores NaN and infinities and is undefined for nothing', () => {
  assert.equal(median([NaN, 7, Infinity]), 7);
  assert.equal(median([]), undefined);
});

test('a ratio against zero or a missing value is undefined', () => {
  assert.equal(ratio(6, 3), 2);
  assert.equal(ratio(6, 0), undefined);
  assert.equal(ratio(undefined, 3), undefined);
});

test('medians are taken per metric and per peer, and a metric a peer lacks stays absent', () => {
  const m = mediansOf([
    { peer: 'nginx', round: 1, metrics: { kaRps: 100, kaCpuUsPerReq: 10 } },
    { peer: 'nginx', round: 2, metrics: { kaRps: 300, kaCpuUsPerReq: 30 } },
    { peer: 'nginx', round: 3, metrics: { kaRps: 200, kaCpuUsPerReq: 20 } },
    { peer: 'direct', round: 1, metrics: { kaRps: 500 } },
  ]);
  assert.deepEqual(m, { kaRps: { nginx: 200, direct: 500 }, kaCpuUsPerReq: { nginx: 20 } });
});

test('the peer order rotates by one each round so every peer runs first once', () => {
  const peers = ['a', 'b', 'c'];
  assert.deepEqual(
    [0, 1, 2].map((r) => peerOrder(peers, r)[0]),
    ['a', 'b', 'c'],
  );
  assert.deepEqual(peerOrder(peers, 4), ['b', 'c', 'a']);
});

test('a round is measured again while a latency load saw more steal than allowed, up to the last attempt', () => {
  assert.equal(measureAgain([0.4, 1.2], 3, 1, 3), false, 'quiet: kept');
  assert.equal(measureAgain([0.4, 7.5], 3, 1, 3), true, 'the paced load in a burst');
  assert.equal(measureAgain([3.1, undefined], 3, 2, 3), true);
  assert.equal(measureAgain([25, 30], 3, 3, 3), false, 'the last attempt is kept, its steal recorded');
  assert.equal(measureAgain([undefined, undefined], 3, 1, 3), false, 'no reading: nothing to judge by');
  assert.equal(measureAgain([50], 100, 1, 3), false, '--max-steal 100 never measures again');
});
