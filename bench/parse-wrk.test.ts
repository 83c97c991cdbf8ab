import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseWrkOutput, parseWrkTime } from './parse-wrk.ts';

const KEEP_ALIVE = `Running 1s test @ http://127.0.0.1:18080/
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.80ms    2.31ms  21.45ms   90.44%
    Req/Sec    23.28k    10.12k   44.75k    75.00%
  Latency Distribution
     50%    0.93ms
     75%    1.90ms
     90%    4.01ms
     99%   13.04ms
  46506 requests in 1.01s, 6.61MB read
Requests/sec:  46041.21
Transfer/sec:      6.54MB
`;

const WITH_ERRORS = `Running 5s test @ http://127.0.0.1:18080/nonexistent
  1 threads and 4 connections
  Latency Distribution
     50%  314.00us
     75%    2.83ms
     90%    6.02ms
     99%     1.20s
  2811 requests in 5.00s, 831.77KB read
  Socket errors: connect 3, read 20, write 1, timeout 6
  Non-2xx or 3xx responses: 2811
Requests/sec:   2801.47
Transfer/sec:    828.95KB
`;

test('a keep-alive run gives its request count, rate and p50/p99 in milliseconds', () => {
  assert.deepEqual(parseWrkOutput(KEEP_ALIVE), {
    requests: 46506,
    durationS: 1.01,
    requestsPerSec: 46041.21,
    p50Ms: 0.93,
    p99Ms: 13.04,
    socketErrors: 0,
    badResponses: 0,
  });
});

test('microsecond and second latencies are converted, and every kind of socket error is added up', () => {
  const r = parseWrkOutput(WITH_ERRORS);
  assert.equal(r.p50Ms, 0.314);
  assert.equal(r.p99Ms, 1200);
  assert.equal(r.socketErrors, 30);
  assert.equal(r.badResponses, 2811);
});

test('output without the latency distribution is refused, naming --latency', () => {
  assert.throws(() => parseWrkOutput('  10 requests in 1.00s, 1KB read\nRequests/sec: 10.00\n'), /--latency/);
});

test('time units from microseconds to minutes are read, and garbage is refused', () => {
  assert.ok(Math.abs(parseWrkTime('456.78us') - 0.45678) < 1e-12);
  assert.equal(parseWrkTime('2.00s'), 2000);
  assert.equal(parseWrkTime('1.50m'), 90_000);
  assert.throws(() => parseWrkTime('fast'), /cannot read a time/);
});
