import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collectForwarded, parseForwardedValue, parseIndexList } from './gcp-metadata.ts';

test('directory listings parse to indices, and any unexpected line fails the whole listing', () => {
  assert.deepEqual(parseIndexList('0/\n1/\n', 'dirs'), [0, 1]);
  assert.deepEqual(parseIndexList('0\n1\n\n', 'leaves'), [0, 1]);
  assert.deepEqual(parseIndexList('', 'leaves'), []);
  assert.throws(() => parseIndexList('<html><body>Error</body></html>', 'dirs'), /unexpected line/);
  assert.throws(() => parseIndexList('0\n1/\n', 'leaves'), /unexpected line/);
});

test('a forwarded value is an address of the expected family, optionally with a full-length prefix', () => {
  assert.deepEqual(parseForwardedValue('10.0.0.2\n', 4), { vip: '10.0.0.2' });
  assert.deepEqual(parseForwardedValue('10.0.0.2/32', 4), { vip: '10.0.0.2' });
  assert.deepEqual(parseForwardedValue('2001:DB8::0:2/128', 6), { vip: '2001:db8::2' });
  assert.deepEqual(parseForwardedValue('2001:db8::/96', 6), { range: '2001:db8::/96' });
});

test('garbage is never a VIP', () => {
  for (const bad of ['', 'hello', '10.0.0.256', '10.0.0.2 10.0.0.3', '<html>', '10.0.0.2/33', '2001:db8::2']) {
    assert.throws(() => parseForwardedValue(bad, 4), /not an IPv4 address|bad prefix/, bad);
  }
  assert.throws(() => parseForwardedValue('10.0.0.2', 6), /not an IPv6 address/);
});

test('collected values are sorted and deduplicated, ranges kept apart', () => {
  const got = collectForwarded([{ vip: '10.0.0.3' }, { vip: '10.0.0.2' }, { vip: '10.0.0.3' }, { range: '2001:db8::/96' }]);
  assert.deepEqual(got, { vips: ['10.0.0.2', '10.0.0.3'], ranges: ['2001:db8::/96'] });
});
