import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalVip, checkCidr, checkVip, printable } from './vip-address.ts';
import { canonicalIp } from '../base/ip.ts';
import { parseStateFileName, stateFileName } from './state-record.ts';

test('the VIP grammar accepts unicast addresses and refuses what a load balancer cannot own', () => {
  for (const [text, canonical] of [
    ['10.0.0.2', '10.0.0.2'],
    ['34.120.1.9', '34.120.1.9'],
    ['2001:DB8::0:2', '2001:db8::2'],
    ['fd00::2', 'fd00::2'],
  ])
    assert.equal(canonicalVip(text!), canonical, text);
  for (const bad of [
    '169.254.169.254',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '240.0.0.1',
    '::',
    'ff02::1',
    'ff05::2',
    'fe80::1',
    'febf::1',
    'fe80::1%eth0',
    '10.0.0.2%eth0',
    '::ffff:10.0.0.2',
    '010.0.0.2',
    '10.0.0',
    '10.0.0.2/32',
    '',
    ' 10.0.0.2',
    'localhost',
    '1'.repeat(60),
  ])
    assert.equal(checkVip(bad).ok, false, bad);
});

test('canonicalIp never throws, and a zone id is no address', () => {
  assert.equal(canonicalIp('fe80::1%eth0'), undefined);
  assert.equal(canonicalIp('fe80::1%'), undefined);
  assert.equal(canonicalIp('2001:DB8::1'), '2001:db8::1');
});

test('CIDRs: a prefix within the family, no zone ids', () => {
  assert.deepEqual(checkCidr('35.191.0.0/16'), { ok: true, cidr: '35.191.0.0/16' });
  assert.deepEqual(checkCidr('2600:2D00:1:B029::/64'), { ok: true, cidr: '2600:2d00:1:b029::/64' });
  for (const bad of ['35.191.0.0', '35.191.0.0/33', 'fe80::%eth0/64', '::/129', '35.191.0.0/16/1', '035.191.0.0/16', '35.191.0.0/-1']) {
    assert.equal(checkCidr(bad).ok, false, bad);
  }
});

// Property tests: whatever the input, the validators answer with a value (never throw), and what
// they accept is safe to put into a file name and a rule.
const SAFE = /^[0-9a-f.:]+$/;
const anyText = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.ipV4(),
  fc.ipV6(),
  fc.ipV4Extended(),
  fc.tuple(fc.ipV6(), fc.string({ maxLength: 10 })).map(([ip, zone]) => `${ip}%${zone}`),
  fc.tuple(fc.ipV4(), fc.constantFrom('\n', '/', '/../', '\0', ' ', '\r\n10.0.0.1')).map(([ip, s]) => ip + s),
);

test('property: checkVip never throws; an accepted VIP is canonical, lower-case hex/dots/colons, and stable', () => {
  fc.assert(
    fc.property(anyText, (text) => {
      const r = checkVip(text);
      if (!r.ok) return typeof r.reason === 'string' && !r.reason.includes('\n');
      assert.match(r.vip, SAFE);
      assert.equal(checkVip(r.vip).ok, true);
      assert.equal(canonicalVip(r.vip), r.vip, 'canonical form is a fixed point');
      return true;
    }),
    { numRuns: 3000 },
  );
});

test('property: state-file names never throw; accepted ones name a valid VIP and stay in their directory', () => {
  const names = fc.oneof(
    anyText.map((t) => `${t}.up`),
    anyText.map((t) => `${t}.down`),
    fc.string({ maxLength: 80 }),
  );
  fc.assert(
    fc.property(names, (name) => {
      const parsed = parseStateFileName(name);
      if (!parsed) return true;
      assert.equal(checkVip(parsed.vip).ok, true);
      const out = stateFileName(parsed.vip, parsed.state);
      assert.ok(!out.includes('/') && !out.includes('\n') && !out.includes('\0') && out !== '..' && !out.startsWith('.'), out);
      return true;
    }),
    { numRuns: 3000 },
  );
});

test('property: CIDR checks never throw; accepted ones are canonical and single-line', () => {
  const cidrs = fc.oneof(
    fc
      .tuple(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string({ maxLength: 20 })), fc.oneof(fc.integer({ min: -5, max: 200 }).map(String), fc.string({ maxLength: 5 })))
      .map(([a, b]) => `${a}/${b}`),
    fc.string({ maxLength: 60 }),
  );
  fc.assert(
    fc.property(cidrs, (text) => {
      const r = checkCidr(text);
      if (r.ok) assert.match(r.cidr, /^[0-9a-f.:]+\/\d{1,3}$/);
      return true;
    }),
    { numRuns: 3000 },
  );
});

test('printable keeps anything on one bounded line', () => {
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (s) => !/[\n\r]/.test(printable(s)) && printable(s).length <= 80 * 6 + 3));
});
