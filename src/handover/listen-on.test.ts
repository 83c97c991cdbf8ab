import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listensAt } from './listen-on.ts';

test('listensAt: an inherited socket counts only where the config listens', () => {
  const at = (address: string, port: number, family = 'IPv4') => ({ address, port, family });
  assert.equal(listensAt(at('127.0.0.1', 6443), { host: '127.0.0.1', port: 6443 }), true);
  assert.equal(listensAt(at('127.0.0.1', 6444), { host: '127.0.0.1', port: 6443 }), false, 'another port');
  assert.equal(listensAt(at('0.0.0.0', 6443), { host: '127.0.0.1', port: 6443 }), false, 'another address');
  assert.equal(listensAt(at('::1', 6443, 'IPv6'), { host: '0:0:0:0:0:0:0:1', port: 6443 }), true, 'IPv6 in any spelling');
  assert.equal(listensAt(at('::ffff:127.0.0.1', 6443, 'IPv6'), { host: '127.0.0.1', port: 6443 }), false, 'a mapped address is another socket');
  assert.equal(listensAt(at('10.0.0.5', 6443), { host: 'node1.example', port: 6443 }), true, 'a name matches by port');
  assert.equal(listensAt('/run/x.sock', { host: '127.0.0.1', port: 6443 }), false, 'a unix socket');
  assert.equal(listensAt(null, { host: '127.0.0.1', port: 6443 }), false);
});
