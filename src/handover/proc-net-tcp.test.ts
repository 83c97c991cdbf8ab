import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeAddress, encodeAddress, parseProcNetTcp } from './proc-net-tcp.ts';
import { parseTarget, targetsWithoutSuccessor } from './await-successor.ts';

// Lines as the kernel prints them (captured on Linux 6.x, x86_64).
const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1923 00000000:0000 0A 00000000:00000000 00:00000000 00000000 65532        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:24FC 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 777 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1923 0100007F:C350 01 00000000:00000000 02:000A7B2E 00000000 65532        0 999 2 0000000000000000 20 4 30 10 -1
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1923 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 65532        0 5151 1 0000000000000000 100 0 0 10 0
`;

test('listening sockets from /proc/net/tcp and tcp6: LISTEN only, address, port and inode', () => {
  assert.deepEqual(parseProcNetTcp(TCP, 4), [
    { host: '127.0.0.1', port: 6435, inode: 4242 },
    { host: '127.0.0.1', port: 9468, inode: 777 },
  ]);
  assert.deepEqual(parseProcNetTcp(TCP6, 6), [{ host: '::1', port: 6435, inode: 5151 }]);
  assert.deepEqual(parseProcNetTcp('header\ngarbage line\n  0: XYZ:1 0 0A a b c d 0 0 1\n', 4), []);
});

test('a successor is a listener on the address whose inode no process of ours holds', () => {
  const listening = [
    { host: '127.0.0.1', port: 6443, inode: 10 },
    { host: '::1', port: 6443, inode: 11 },
  ];
  const targets = [parseTarget('127.0.0.1:6443')!, parseTarget('[::1]:6443')!];
  assert.equal(targetsWithoutSuccessor(targets, listening, new Set([10, 11])).length, 2, 'only our own listeners');
  const withNew = [...listening, { host: '127.0.0.1', port: 6443, inode: 20 }];
  assert.deepEqual(targetsWithoutSuccessor(targets, withNew, new Set([10, 11])), [{ host: '::1', port: 6443 }]);
  assert.equal(targetsWithoutSuccessor(targets, [...withNew, { host: '::1', port: 6443, inode: 21 }], new Set([10, 11])).length, 0);
});

test('targets: HOST:PORT with IPv6 in brackets; names, bad ports and bare IPv6 are refused', () => {
  assert.deepEqual(parseTarget('[0:0::1]:6443'), { host: '::1', port: 6443 });
  for (const bad of ['localhost:6443', '::1:6443', '127.0.0.1:0', '127.0.0.1:65536', '127.0.0.1', '[127.0.0.1]:1'])
    assert.equal(parseTarget(bad), undefined, bad);
});

test('property: encode then decode gives the canonical address back (both families)', () => {
  fc.assert(
    fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (ip) => {
      const family = ip.includes(':') ? 6 : 4;
      const back = decodeAddress(encodeAddress(ip), family);
      assert.equal(back, family === 4 ? ip : new URL(`http://[${ip}]/`).hostname.slice(1, -1));
    }),
  );
});
