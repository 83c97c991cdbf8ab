import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkPeer } from './decide-peer-address.ts';
import { checkVip } from '../watch/vip-address.ts';
import { parseIp } from '../base/ip.ts';

test('a peer is a unicast address of another host: loopback, link-local, multicast and zone ids are refused', () => {
  for (const [text, canonical] of [
    ['10.0.2.12', '10.0.2.12'],
    ['2001:DB8:2::12', '2001:db8:2::12'],
  ])
    assert.deepEqual(checkPeer(text!), { ok: true, peer: canonical, family: text!.includes(':') ? 6 : 4 });
  for (const bad of [
    '127.0.0.1',
    '127.8.9.10',
    '::1',
    '169.254.169.254',
    'fe80::1',
    '0.0.0.0',
    '::',
    '224.0.0.1',
    '10.0.2.12%eth0',
    '::ffff:10.0.2.12',
    '10.0.2',
    '',
  ])
    assert.equal(checkPeer(bad).ok, false, bad);
});

test('property: a peer is exactly a VIP-grammar address that is not loopback, in canonical form', () => {
  const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((p) => p.join('.'));
  const v6 = fc.array(fc.nat(0xffff), { minLength: 8, maxLength: 8 }).map((p) => p.map((x) => x.toString(16)).join(':'));
  fc.assert(
    fc.property(fc.oneof(v4, v6, fc.string({ maxLength: 50 })), (text) => {
      const r = checkPeer(text);
      const v = checkVip(text);
      const loopback = v.ok && (v.family === 4 ? v.vip.startsWith('127.') : v.vip === '::1');
      assert.equal(r.ok, v.ok && !loopback, `${text}: same grammar as a VIP, loopback aside`);
      if (!r.ok) return;
      assert.ok(v.ok && v.vip === r.peer, `${text} is a VIP-grammar address`);
      assert.equal(checkPeer(r.peer).ok, true, 'canonical form accepted again');
      const ip = parseIp(r.peer)!;
      assert.ok(ip.family === 4 ? ip.value >> 24n !== 127n : ip.value !== 1n, `${r.peer} is not loopback`);
    }),
    { numRuns: 2000 },
  );
});
