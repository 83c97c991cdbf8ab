import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { buildOpenloop, openloopMissing, parseArrivals, parseOpenloop, parseRates, renderOpenloop, runOpenloop, type OpenloopResult } from './openloop.ts';

// As openloop.c prints it.
const LINE =
  'openloop requests=994 sent=994 errors=0 queued=10 connections=8 rate=500 duration_s=2.000 arrivals=poisson lat_p50_us=125 lat_p90_us=414 lat_p99_us=2572 lat_p999_us=5218 lat_max_us=5218 svc_p50_us=90 svc_p99_us=1384 lag_p50_us=28 lag_p99_us=1132 lag_max_us=4733\n';

test('parseOpenloop reads the summary line, times in µs', () => {
  const r = parseOpenloop(`some stderr noise\n${LINE}`);
  assert.equal(r.requests, 994);
  assert.equal(r.queued, 10);
  assert.equal(r.arrivals, 'poisson');
  assert.equal(r.durationS, 2);
  assert.equal(r.latP99Us, 2572);
  assert.equal(r.svcP99Us, 1384);
  assert.equal(r.lagMaxUs, 4733);
});

test('parseOpenloop names what is missing or not a number, and rejects unknown arrivals', () => {
  assert.throws(() => parseOpenloop(''), /no summary line/);
  assert.throws(() => parseOpenloop(LINE.replace(' lat_p99_us=2572', '')), /lat_p99_us is missing/);
  assert.throws(() => parseOpenloop(LINE.replace('lat_p99_us=2572', 'lat_p99_us=nan')), /lat_p99_us is "nan", not a number/);
  assert.throws(() => parseOpenloop(LINE.replace('arrivals=poisson', 'arrivals=bursty')), /arrivals "bursty"/);
});

const result: fc.Arbitrary<OpenloopResult> = fc.record({
  requests: fc.nat(),
  sent: fc.nat(),
  errors: fc.nat(),
  queued: fc.nat(),
  connections: fc.integer({ min: 1, max: 1024 }),
  rate: fc.integer({ min: 1, max: 1e6 }),
  durationS: fc.integer({ min: 1, max: 1e6 }).map((ms) => ms / 1000),
  arrivals: fc.constantFrom('poisson' as const, 'even' as const),
  latP50Us: fc.integer({ min: -1, max: 1e9 }),
  latP90Us: fc.integer({ min: -1, max: 1e9 }),
  latP99Us: fc.integer({ min: -1, max: 1e9 }),
  latP999Us: fc.integer({ min: -1, max: 1e9 }),
  latMaxUs: fc.integer({ min: -1, max: 1e9 }),
  svcP50Us: fc.integer({ min: -1, max: 1e9 }),
  svcP99Us: fc.integer({ min: -1, max: 1e9 }),
  lagP50Us: fc.integer({ min: -1, max: 1e9 }),
  lagP99Us: fc.integer({ min: -1, max: 1e9 }),
  lagMaxUs: fc.integer({ min: -1, max: 1e9 }),
});

test('property: every summary openloop can print parses back to the same values', () => {
  fc.assert(fc.property(result, (r) => assert.deepEqual(parseOpenloop(renderOpenloop(r)), { ...r })));
});

test('property: a summary with one value replaced by a non-number is refused, naming that key', () => {
  fc.assert(
    fc.property(result, fc.nat({ max: 16 }), fc.constantFrom('x', '', '1e3', '--1', '0x10'), (r, i, bad) => {
      const words = renderOpenloop(r).trim().split(' ');
      const idx = 1 + i + (i >= 7 ? 1 : 0); // skip "openloop" and arrivals=
      const name = words[idx]!.split('=')[0]!;
      words[idx] = `${name}=${bad}`;
      assert.throws(() => parseOpenloop(words.join(' ')), new RegExp(`openloop: ${name} is`));
    }),
  );
});

test('openloop against a real HTTP server: the rate it was asked for, latency from the intended send at least the service time', async (t) => {
  const missing = await openloopMissing();
  if (missing) return t.skip(missing);
  const dir = await mkdtemp(join(tmpdir(), 'kw-openloop-test-'));
  const server = createServer((_req, res) => {
    res.setHeader('content-length', '5');
    res.end('test\n');
  });
  try {
    const bin = await buildOpenloop(dir);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    for (const arrivals of ['even', 'poisson'] as const) {
      const r = await runOpenloop(bin, { port, connections: 4, rate: 400, durationS: 1, warmupS: 0.2, arrivals, seed: 1 });
      assert.equal(r.errors, 0);
      assert.equal(r.arrivals, arrivals);
      // Even gaps send exactly rate x duration (one per gap); Poisson about that many.
      if (arrivals === 'even') assert.ok(Math.abs(r.requests - 400) <= 4, `${r.requests} requests`);
      else assert.ok(r.requests > 300 && r.requests < 500, `${r.requests} requests`);
      assert.equal(r.sent, r.requests);
      assert.ok(r.latP50Us >= 0 && r.latP99Us >= r.latP50Us && r.latMaxUs >= r.latP999Us);
      assert.ok(r.latP99Us >= r.svcP99Us, 'waiting before the send only adds');
      assert.ok(r.lagP50Us >= 0);
    }
    await assert.rejects(runOpenloop(bin, { port, connections: 0, rate: 1, durationS: 1, warmupS: 0, arrivals: 'even', seed: 1 }), /bad arguments/);
  } finally {
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('--open-loop rates and --arrivals: whole requests/s, or an error naming the word', () => {
  assert.deepEqual(parseRates('6000,500'), [6000, 500]);
  assert.deepEqual(parseRates(''), []);
  assert.throws(() => parseRates('6000,fast'), /"fast" is not a whole number/);
  assert.throws(() => parseRates('0'), /"0" is not/);
  assert.throws(() => parseRates('1.5'), /"1.5" is not/);
  assert.equal(parseArrivals('even'), 'even');
  assert.throws(() => parseArrivals('burst'), /"burst" is neither poisson nor even/);
});

test('property: any list of rates from 1 to 1,000,000 parses back to itself', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 1, max: 1_000_000 }), { minLength: 1, maxLength: 6 }), (rates) =>
      assert.deepEqual(parseRates(rates.join(',')), rates),
    ),
  );
});
