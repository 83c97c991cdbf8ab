import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { clusterCidrProblem, podCidrsOutside } from './cidr-scope.ts';
import { parseCidr } from '../../base/ip.ts';

const v4 = fc
  .tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))
  .map((o) => o.join('.'));

test('a cluster CIDR is never /0, and wider than /8 (IPv6 /32) only when forced', () => {
  fc.assert(
    fc.property(v4, fc.integer({ min: 0, max: 32 }), fc.boolean(), (ip, prefix, force) => {
      const problem = clusterCidrProblem(`${ip}/${prefix}`, { allowWide: force });
      assert.equal(problem === undefined, prefix >= 8 || (force && prefix > 0), `${ip}/${prefix} force=${force}`);
    }),
  );
  for (const [cidr, force, ok] of [
    ['::/0', true, false],
    ['fd00::/31', false, false],
    ['fd00::/31', true, true],
    ['fd00::/32', false, true],
    ['10.0.0.1', false, false],
    ['', false, false],
  ] as const) {
    assert.equal(clusterCidrProblem(cidr, { allowWide: force }) === undefined, ok, `${cidr} ${force}`);
  }
});

test('Node pod CIDRs outside the cluster CIDR, or unparsable, are named', () => {
  const nodes = [
    { name: 'a', addresses: [], podCidrs: ['100.100.1.0/24'] },
    { name: 'b', addresses: [], podCidrs: ['10.9.0.0/24', 'junk'] },
  ];
  assert.deepEqual(podCidrsOutside(parseCidr('100.100.0.0/16')!, nodes), ['b: 10.9.0.0/24', 'b: junk']);
});
