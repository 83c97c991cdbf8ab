// Property tests of the parsers every daemon's flags go through: no input makes them throw anything
// but the project's own error, no accepted value renders a line break, and the ranges hold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import fc from 'fast-check';
import { z } from 'zod';
import { MAX_TIMER_MS, formatDuration, parseDuration } from '../base/duration.ts';
import { UsageError } from '../base/errors.ts';
import { checkHostPort, duration, filePath, formatHostPort, hostPort, ipAddress, ipAddressProblem, parseHostPort, upstreamHostPort } from './fields.ts';
import { mergeConfig } from './load-config.ts';
import { proxyFields } from '../proxy/proxy-config.ts';
import { watchFields } from '../watch/watch-config.ts';

const RUNS = { numRuns: 2000 };
const LINE_BREAK = /[\r\n\u2028\u2029]/;

/** Strings that look like the inputs: digits, units, brackets, colons, percent, dots, controls. */
const nearMiss = fc.string({ unit: fc.constantFrom(...'0123456789.:[]%-abcdefhmsx:\n\r\t ff'.split('')), maxLength: 40 });
const anyText = fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }), nearMiss);

test('durations: any text is a number of ms in range or refused; never a throw, never past the timer limit', () => {
  const field = duration({ min: 10, max: 3_600_000 });
  fc.assert(
    fc.property(anyText, (text) => {
      const ms = parseDuration(text);
      if (ms !== undefined) assert.ok(Number.isInteger(ms) && ms >= 0, `${JSON.stringify(text)} → ${ms}`);
      const r = field.safeParse(text);
      if (r.success) assert.ok(r.data >= 10 && r.data <= 3_600_000);
      else assert.ok(!LINE_BREAK.test(r.error.issues[0]!.message), 'the message is one line');
    }),
    RUNS,
  );
});

test('durations: composed values parse to their sum, and anything above 2^31-1 ms is refused by every field', () => {
  const unit = fc.constantFrom(['h', 3_600_000], ['m', 60_000], ['s', 1000], ['ms', 1]);
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(100_000), unit), { minLength: 1, maxLength: 4 }), (parts) => {
      const text = parts.map(([n, [u]]) => `${n}${u}`).join('');
      const want = parts.reduce((sum, [n, [, k]]) => sum + n * k, 0);
      assert.equal(parseDuration(text), want);
      const r = duration({ max: Number.MAX_SAFE_INTEGER }).safeParse(text);
      assert.equal(r.success, want <= MAX_TIMER_MS, text);
      if (r.success) assert.equal(parseDuration(formatDuration(r.data)), r.data, 'formatting round-trips');
    }),
    RUNS,
  );
});

test('host:port: any text parses to a host without line breaks or is refused; accepted values round-trip', () => {
  fc.assert(
    fc.property(anyText, (text) => {
      const hp = parseHostPort(text);
      for (const field of [hostPort, upstreamHostPort]) {
        const r = field.safeParse(text);
        if (!r.success) assert.ok(!LINE_BREAK.test(r.error.issues[0]!.message));
      }
      if (!hp) return;
      assert.ok(!LINE_BREAK.test(hp.host) && !hp.host.includes('%') && !/\s/.test(hp.host), JSON.stringify(hp));
      assert.ok(hp.port >= 0 && hp.port <= 65535);
      assert.deepEqual(parseHostPort(formatHostPort(hp)), hp);
    }),
    RUNS,
  );
});

test('host:port: IPv6 with a zone id is refused, v4-mapped accepted, ports out of range refused', () => {
  const zone = fc.stringMatching(/^[a-z0-9._-]{1,15}$/);
  fc.assert(
    fc.property(fc.ipV6(), zone, fc.integer({ min: 1, max: 65535 }), (ip, z, port) => {
      assert.deepEqual(parseHostPort(`[${ip}]:${port}`), { host: ip, port });
      assert.match((checkHostPort(`[${ip}%${z}]:${port}`) as { problem: string }).problem, /zone id/);
      assert.match(ipAddressProblem(`${ip}%${z}`) ?? '', /zone id/);
    }),
    RUNS,
  );
  fc.assert(
    fc.property(fc.ipV4(), fc.integer({ min: 65536, max: 99999 }), (v4, port) => {
      assert.deepEqual(parseHostPort(`[::ffff:${v4}]:443`), { host: `::ffff:${v4}`, port: 443 });
      assert.equal(parseHostPort(`${v4}:${port}`), undefined);
      assert.equal(upstreamHostPort.safeParse(`${v4}:0`).success, false);
      assert.equal(hostPort.safeParse(`${v4}:0`).success, true, 'listen addresses may ask for any free port');
    }),
    RUNS,
  );
});

test('IP addresses: accepted values are plain IPv4 or IPv6 without a zone id', () => {
  fc.assert(
    fc.property(fc.oneof(anyText, fc.ipV4(), fc.ipV6(), fc.ipV4Extended()), (text) => {
      const r = ipAddress.safeParse(text);
      if (r.success) assert.ok(isIP(text) !== 0 && !text.includes('%'));
      else assert.ok(!LINE_BREAK.test(r.error.issues[0]!.message));
    }),
    RUNS,
  );
});

test('paths: no accepted path holds a control character', () => {
  fc.assert(
    fc.property(anyText, (text) => {
      const r = filePath().safeParse(text);
      if (r.success)
        assert.ok(
          [...text].every((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f),
          JSON.stringify(text),
        );
    }),
    RUNS,
  );
});

test('proxy and watch flags: any values give a config or one UsageError line, nothing else', () => {
  const schemas = [z.strictObject(proxyFields), z.strictObject(watchFields)];
  const keys = [...new Set([...Object.keys(proxyFields), ...Object.keys(watchFields)])];
  const value = fc.oneof(
    anyText,
    fc.array(fc.oneof(anyText, fc.integer(), fc.constant(null)), { maxLength: 3 }),
    fc.boolean(),
    fc.integer(),
    fc.constant(null),
    fc.dictionary(fc.string({ maxLength: 5 }), anyText, { maxKeys: 2 }),
  );
  fc.assert(
    fc.property(fc.constantFrom(...schemas), fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: 4 }), fc.boolean(), (schema, data, fromFile) => {
      try {
        mergeConfig(schema, fromFile ? data : {}, fromFile ? {} : data, 'f.yaml');
      } catch (err) {
        assert.ok(err instanceof UsageError, `threw ${String(err)}`);
        assert.ok(!LINE_BREAK.test(err.message), JSON.stringify(err.message));
        assert.doesNotMatch(err.message, /Invalid input|Too (small|big)/, "the validator's own words never reach the user");
      }
    }),
    { numRuns: 1000 },
  );
});
