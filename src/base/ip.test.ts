import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cidrWithin, ipKey, parseCidr, sameCidrText } from './ip.ts';

test('a prefix lies within another only when both its first and last address do', () => {
  const cases: [string, string, boolean][] = [
    ['100.100.1.0/24', '100.100.0.0/16', true],
    ['100.100.0.0/16', '100.100.0.0/16', true],
    ['100.100.0.0/15', '100.100.0.0/16', false],
    ['10.200.0.0/16', '100.100.0.0/16', false],
    ['100.101.0.0/24', '100.100.0.0/16', false],
    ['fd00:1:2::/64', 'fd00:1::/32', true],
    ['fd00:2::/64', 'fd00:1::/32', false],
    ['100.100.1.0/24', 'fd00::/8', false],
  ];
  for (const [inner, outer, want] of cases) assert.equal(cidrWithin(parseCidr(inner)!, parseCidr(outer)!), want, `${inner} in ${outer}`);
});

test('malformed prefixes and bare addresses are not CIDRs', () => {
  for (const bad of ['', '10.0.0.1', '10.0.0.0/33', '10.0.0/8', '300.0.0.0/8', '1::2::3/64', 'x/8', '10.0.0.0/']) assert.equal(parseCidr(bad), undefined, bad);
});

test('host bits and IPv6 spellings do not make two equal prefixes differ', () => {
  assert.ok(sameCidrText('100.100.4.7/24', '100.100.4.0/24'));
  assert.ok(sameCidrText('fd00:0:0::/48', 'fd00::/48'));
  assert.ok(!sameCidrText('100.100.4.0/24', '100.100.4.0/25'));
  assert.equal(ipKey('fd00::1'), ipKey('fd00:0:0:0:0:0:0:1'));
});
