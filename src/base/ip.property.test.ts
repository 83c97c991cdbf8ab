// Property tests of the one IP/CIDR grammar, against two independent oracles: Node's `isIP` for
// what is an address, and the WHATWG URL parser for the canonical IPv6 spelling (the spelling
// state-file names have always used).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import fc from 'fast-check';
import { canonicalIp, cidrContains, cidrWithin, formatCidr, formatIp, ipBits, ipKey, parseCidr, parseIp, parsePrefixOrAddress, type IpAddress } from './ip.ts';

const RUNS = { numRuns: 2000 };

const v4 = fc.bigInt({ min: 0n, max: (1n << 32n) - 1n }).map((value): IpAddress => ({ family: 4, value }));
/** IPv6 values biased towards runs of zero groups, where the "::" choices are. */
const v6 = fc
  .array(fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 0xffff })), { minLength: 8, maxLength: 8 })
  .map((gs): IpAddress => ({ family: 6, value: gs.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n) }));
const anyIp = fc.oneof(v4, v6);

/** Every RFC 4291 spelling of one IPv6 value: leading zeros, upper case, any zero run compressed, a dotted tail. */
function spellings(value: bigint): fc.Arbitrary<string> {
  const groups = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn));
  return fc.record({ pad: fc.boolean(), upper: fc.boolean(), cut: fc.nat(), dotted: fc.boolean() }).map(({ pad, upper, cut, dotted }) => {
    let hex = groups.map((g) => (pad ? g.toString(16).padStart(4, '0') : g.toString(16)));
    if (upper) hex = hex.map((h) => h.toUpperCase());
    if (dotted) hex = [...hex.slice(0, 6), `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`];
    const runs: [number, number][] = [];
    for (let i = 0; i < hex.length; i++)
      for (let j = i + 1; j <= hex.length; j++) if (groups.slice(i, j).every((g) => g === 0) && (!dotted || j <= 6)) runs.push([i, j]);
    if (runs.length === 0 || cut % 2 === 0) return hex.join(':');
    const [i, j] = runs[cut % runs.length]!;
    return `${hex.slice(0, i).join(':')}::${hex.slice(j).join(':')}`;
  });
}

const nearMiss = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF.:%/ x-'.split('')), maxLength: 46 });

test('format then parse gives the value back, in both families', () => {
  fc.assert(
    fc.property(anyIp, (ip) => {
      assert.deepEqual(parseIp(formatIp(ip)), ip);
      assert.equal(isIP(formatIp(ip)), ip.family);
    }),
    RUNS,
  );
});

test('every spelling of an IPv6 address parses to its value and canonicalises as the URL parser does', () => {
  fc.assert(
    fc.property(
      v6.chain((ip) => fc.tuple(fc.constant(ip), spellings(ip.value))),
      ([ip, text]) => {
        assert.equal(isIP(text), 6, text);
        assert.deepEqual(parseIp(text), ip, text);
        assert.equal(canonicalIp(text), new URL(`http://[${text}]/`).hostname.slice(1, -1), text);
        assert.equal(ipKey(text), ipKey(formatIp(ip)));
      },
    ),
    RUNS,
  );
});

test('the grammar is isIP without zone ids, and never throws', () => {
  fc.assert(
    fc.property(fc.oneof(nearMiss, fc.string({ maxLength: 50 }), anyIp.map(formatIp)), (text) => {
      const want = text.includes('%') ? 0 : isIP(text);
      assert.equal(parseIp(text)?.family ?? 0, want, JSON.stringify(text));
      if (want === 4) assert.equal(canonicalIp(text), text);
    }),
    RUNS,
  );
});

test('zone ids, leading zeros in IPv4 and white space are refused', () => {
  for (const bad of [
    'fe80::1%eth0',
    'fe80::1%',
    '::1%1',
    '010.0.0.1',
    '1.2.3',
    ' 1.2.3.4',
    '1.2.3.4 ',
    '::ffff:01.2.3.4',
    '1.2.3.4::',
    '1::2::3',
    '12345::',
    '::1.2.3.4:5',
    '',
  ]) {
    assert.equal(parseIp(bad), undefined, bad);
    assert.equal(canonicalIp(bad), undefined, bad);
  }
  assert.equal(canonicalIp('FD00:0:0:0:0:0:0:2'), 'fd00::2');
  assert.equal(canonicalIp('1:0:0:2:0:0:0:3'), '1:0:0:2::3', 'the longest run is compressed');
  assert.equal(canonicalIp('1:0:0:2:0:0:3:4'), '1::2:0:0:3:4', 'of equal runs, the first');
  assert.equal(canonicalIp('1:0:2:3:4:5:6:7'), '1:0:2:3:4:5:6:7', 'one zero group stays');
  assert.equal(canonicalIp('::ffff:1.2.3.4'), '::ffff:102:304');
});

test('prefixes: the length is bounded by the family, the base has no host bits, and the address is kept', () => {
  fc.assert(
    fc.property(anyIp, fc.integer({ min: 0, max: 140 }), (ip, prefix) => {
      const c = parseCidr(`${formatIp(ip)}/${prefix}`);
      if (prefix > ipBits(ip.family)) return assert.equal(c, undefined);
      assert.ok(c);
      assert.equal(c.address, ip.value);
      assert.equal(c.base & ((1n << BigInt(ipBits(ip.family) - prefix)) - 1n), 0n);
      assert.ok(cidrContains(c, ip), 'a prefix contains the address it was written with');
      assert.deepEqual(parseCidr(formatCidr(c))?.base, c.base);
    }),
    RUNS,
  );
  for (const bad of [
    '',
    '10.0.0.1',
    '10.0.0.0/33',
    '::/129',
    '10.0.0/8',
    '300.0.0.0/8',
    '1::2::3/64',
    'x/8',
    '10.0.0.0/',
    '10.0.0.0/-1',
    '10.0.0.0/0008',
    'fe80::%eth0/64',
  ])
    assert.equal(parseCidr(bad), undefined, bad);
  assert.equal(parsePrefixOrAddress('10.0.0.1')?.prefix, 32);
  assert.equal(parsePrefixOrAddress('10.0.0.1/abc'), undefined);
});

test('containment: an address is inside a prefix exactly when its leading bits match, and within is containment of both ends', () => {
  fc.assert(
    fc.property(anyIp, anyIp, fc.nat(128), fc.nat(128), (a, b, p, q) => {
      const pa = p % (ipBits(a.family) + 1);
      const ca = parseCidr(`${formatIp(a)}/${pa}`)!;
      const shift = BigInt(ipBits(a.family) - pa);
      assert.equal(cidrContains(ca, b), a.family === b.family && a.value >> shift === b.value >> shift);
      const qb = q % (ipBits(b.family) + 1);
      const cb = parseCidr(`${formatIp(b)}/${qb}`)!;
      const last = { family: cb.family, value: cb.base | ((1n << BigInt(ipBits(cb.family) - qb)) - 1n) };
      assert.equal(cidrWithin(cb, ca), cidrContains(ca, { family: cb.family, value: cb.base }) && cidrContains(ca, last));
    }),
    RUNS,
  );
});
