import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { checkPools, defaultPools, parseCidr, type AddressRange, type PoolFault } from './ip-math.ts';
import { parseIp } from '../../src/base/ip.ts';

const cidr = parseCidr('10.79.0.0/24')!;
const fault = (asked: unknown, gateway: string | null = '10.79.0.1'): PoolFault => {
  const got = checkPools(asked, cidr, gateway);
  assert.ok(!Array.isArray(got), `accepted ${JSON.stringify(asked)}`);
  return got;
};

test("pools: Neutron's checks in its order, each with its fault type", () => {
  assert.deepEqual(checkPools([{ start: '10.79.0.100', end: '10.79.0.199' }], cidr, '10.79.0.1'), [{ start: '10.79.0.100', end: '10.79.0.199' }]);
  assert.equal(fault('10.79.0.100-10.79.0.199').type, 'HTTPBadRequest');
  assert.match(fault([{ start: '10.79.0.100' }]).message, /^Invalid input for allocation_pools\. Reason: .*Expected keys/);
  assert.match(fault([{ start: '10.79.0.100', end: '10.79.0.9', extra: 1 }]).message, /Provided keys: \{'end', 'extra', 'start'\}/);
  assert.match(fault([{ start: '10.79.0.300', end: '10.79.0.9' }]).message, /'10\.79\.0\.300' is not a valid IP address/);
  assert.deepEqual(fault([{ start: '10.79.0.200', end: '10.79.0.100' }]), {
    status: 400,
    type: 'InvalidAllocationPool',
    message: 'The allocation pool 10.79.0.200-10.79.0.100 is not valid.',
  });
  assert.equal(fault([{ start: 'fd00::1', end: 'fd00::9' }]).type, 'InvalidAllocationPool', 'another family than the subnet');
  assert.equal(fault([{ start: '10.79.0.100', end: '10.79.1.5' }]).type, 'OutOfBoundsAllocationPool');
  assert.equal(fault([{ start: '10.79.0.0', end: '10.79.0.5' }]).type, 'OutOfBoundsAllocationPool', 'the network address is no host');
  assert.equal(fault([{ start: '10.79.0.250', end: '10.79.0.255' }]).type, 'OutOfBoundsAllocationPool', 'nor the broadcast address');
  const overlap = fault([
    { start: '10.79.0.10', end: '10.79.0.20' },
    { start: '10.79.0.20', end: '10.79.0.30' },
  ]);
  assert.deepEqual([overlap.status, overlap.type], [409, 'OverlappingAllocationPools']);
  const overGateway = fault([{ start: '10.79.0.1', end: '10.79.0.9' }]);
  assert.deepEqual([overGateway.status, overGateway.type], [409, 'GatewayConflictWithAllocationPools']);
  assert.ok(Array.isArray(checkPools([{ start: '10.79.0.1', end: '10.79.0.9' }], cidr, null)), 'no gateway, no conflict');
  // A malformed pool is reported before a later pool's range problem, as the API validates first.
  assert.equal(
    fault([
      { start: '10.79.0.200', end: '10.79.0.100' },
      { start: 'x', end: 'y' },
    ]).type,
    'HTTPBadRequest',
  );
});

test('pools: whatever is asked, the answer is a fault or pools Neutron would keep', () => {
  const octet = fc.integer({ min: 0, max: 260 });
  const address = fc.oneof(
    fc.tuple(octet, octet).map(([a, b]) => `10.79.${a}.${b}`),
    fc.constantFrom('fd00::5', '', 'x', '10.79.0.01'),
    fc.anything(),
  );
  const pool = fc.oneof(fc.record({ start: address, end: address }), fc.anything());
  fc.assert(
    fc.property(fc.oneof(fc.array(pool, { maxLength: 4 }), fc.anything()), fc.constantFrom('10.79.0.1', '10.79.0.254', null), (asked, gateway) => {
      const got = checkPools(asked, cidr, gateway);
      if (!Array.isArray(got)) {
        assert.ok([400, 409].includes(got.status) && got.type.length > 0 && got.message.length > 0);
        return;
      }
      const spans = got.map((p: AddressRange) => [parseIp(p.start)!.value, parseIp(p.end)!.value] as const);
      for (const [a, b] of spans) {
        assert.ok(a >= cidr.base + 1n && b <= cidr.base + 254n && a <= b, JSON.stringify(got));
        if (gateway !== null) assert.ok(parseIp(gateway)!.value < a || parseIp(gateway)!.value > b);
      }
      for (let i = 0; i < spans.length; i++) for (let j = i + 1; j < spans.length; j++) assert.ok(spans[i]![1] < spans[j]![0] || spans[j]![1] < spans[i]![0]);
    }),
    { numRuns: 500 },
  );
});

test('default pools: every host address but the gateway, and pass their own check', () => {
  const pools = defaultPools(cidr, '10.79.0.1');
  assert.deepEqual(pools, [{ start: '10.79.0.2', end: '10.79.0.254' }]);
  assert.deepEqual(checkPools(pools, cidr, '10.79.0.1'), pools);
  assert.deepEqual(defaultPools(cidr, '10.79.0.100'), [
    { start: '10.79.0.1', end: '10.79.0.99' },
    { start: '10.79.0.101', end: '10.79.0.254' },
  ]);
});
