import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findConflicts, parseLocalRoutes, prefixContains } from './conflicting-routes.ts';

test('ip -j output for local proto 66 routes parses to routes with their device', () => {
  const v4 = parseLocalRoutes('[{"type":"local","dst":"10.0.0.100","dev":"eth0","scope":"host","flags":[]}]', 4);
  assert.deepEqual(v4, [{ family: 4, dst: '10.0.0.100', dev: 'eth0' }]);
  assert.deepEqual(parseLocalRoutes('[]\n', 6), []);
  assert.deepEqual(parseLocalRoutes('', 6), []);
});

test('a route conflicts with a VIP it equals or contains, and with no other', () => {
  assert.equal(prefixContains('10.0.0.100', '10.0.0.100'), true);
  assert.equal(prefixContains('10.0.0.0/24', '10.0.0.100'), true);
  assert.equal(prefixContains('10.0.1.0/24', '10.0.0.100'), false);
  assert.equal(prefixContains('2001:db8:100::/96', '2001:db8:100::100'), true);
  assert.equal(prefixContains('2001:db8:100::100', '10.0.0.100'), false);
  // An unreadable prefix length used to throw (BigInt(NaN)) or shift the wrong way; now it is no conflict.
  for (const odd of ['10.0.0.0/abc', '10.0.0.0/33', '10.0.0.0/', 'default', 'fe80::1%eth0']) assert.equal(prefixContains(odd, '10.0.0.100'), false, odd);
  const routes = [
    { family: 4 as const, dst: '10.0.0.100', dev: 'eth0' },
    { family: 4 as const, dst: '10.0.0.200', dev: 'eth0' },
  ];
  assert.deepEqual(
    findConflicts(routes, ['10.0.0.100']).map((c) => c.route.dst),
    ['10.0.0.100'],
  );
});
