import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isNodeName, ownPolicyVip, parseMp0Addresses, parsePolicyList, planReroutes, policyMatch, type RouterPolicy } from './ovn-reroute.ts';

// As ovn-nbctl 23.03 prints it (captured from a real NB database).
const LISTED = `Routing Policies
      1010    inport == "rtos-node1" && ip4.dst == 10.0.0.100         reroute                10.128.0.2
      1010     inport == "rtos-node1" && ip6.dst == fd00::100         reroute                   fd01::2
      1010    inport == "rtos-node2" && ip4.dst == 10.0.0.100         reroute                10.129.0.2
       102 ip4.src == 10.128.0.0/14 && ip4.dst == 10.128.0.0/14           allow
`;

test('lr-policy-list output parses to policies', () => {
  assert.deepEqual(parsePolicyList(LISTED), [
    { priority: 1010, match: 'inport == "rtos-node1" && ip4.dst == 10.0.0.100', action: 'reroute', nexthop: '10.128.0.2' },
    { priority: 1010, match: 'inport == "rtos-node1" && ip6.dst == fd00::100', action: 'reroute', nexthop: 'fd01::2' },
    { priority: 1010, match: 'inport == "rtos-node2" && ip4.dst == 10.0.0.100', action: 'reroute', nexthop: '10.129.0.2' },
    { priority: 102, match: 'ip4.src == 10.128.0.0/14 && ip4.dst == 10.128.0.0/14', action: 'allow' },
  ]);
});

test('the plan adds missing policies, removes ours for down VIPs, and leaves everyone else alone', () => {
  const policies = parsePolicyList(LISTED);
  const plan = planReroutes({ node: 'node1', upVips: ['10.0.0.100', '10.0.0.101'], mp0: { 4: '10.128.0.2' }, policies });
  assert.deepEqual(plan, {
    add: [{ match: policyMatch('node1', '10.0.0.101'), nexthop: '10.128.0.2' }],
    // fd00::100 is not up (and there is no IPv6 mp0 address): ours, so it goes. node2's and priority 102 stay.
    del: [{ match: 'inport == "rtos-node1" && ip6.dst == fd00::100' }],
  });
  const moved = planReroutes({ node: 'node1', upVips: ['10.0.0.100'], mp0: { 4: '10.128.0.9' }, policies: policies.slice(0, 1) });
  assert.deepEqual(
    moved,
    { add: [{ match: policyMatch('node1', '10.0.0.100'), nexthop: '10.128.0.9' }], del: [{ match: policyMatch('node1', '10.0.0.100') }] },
    'a changed mp0 address is replaced',
  );
});

test('only exactly our form for this node counts as ours', () => {
  assert.equal(ownPolicyVip('node1', 'inport == "rtos-node1" && ip4.dst == 10.0.0.100'), '10.0.0.100');
  for (const m of [
    'inport == "rtos-node2" && ip4.dst == 10.0.0.100',
    'inport == "rtos-node1" && ip6.dst == 10.0.0.100',
    'inport == "rtos-node1" && ip4.dst == 10.0.0.0/8',
    'inport == "rtos-node1" && ip4.dst == 10.0.0.100 || 1',
    'ip4.dst == 10.0.0.100',
  ])
    assert.equal(ownPolicyVip('node1', m), undefined, m);
});

test('node names that could end the match string are refused', () => {
  assert.equal(isNodeName('master-0.example.com'), true);
  for (const bad of ['', 'Node1', 'a"b', 'a b', 'node1" || 1 || "', '-x', 'x-', 'a'.repeat(254)]) assert.equal(isNodeName(bad), false, bad);
});

test('the management port addresses come from ip -j addr', () => {
  const json = JSON.stringify([
    {
      ifname: 'ovn-k8s-mp0',
      addr_info: [
        { family: 'inet', local: '10.128.0.2', prefixlen: 23, scope: 'global' },
        { family: 'inet6', local: 'fe80::1', prefixlen: 64, scope: 'link' },
        { family: 'inet6', local: 'fd01::2', prefixlen: 64, scope: 'global' },
      ],
    },
  ]);
  assert.deepEqual(parseMp0Addresses(json), { 4: '10.128.0.2', 6: 'fd01::2' });
  assert.deepEqual(parseMp0Addresses(''), {});
});

test('property: the plan never deletes a policy that is not ours, and adds only valid matches', () => {
  const vip = fc.oneof(fc.ipV4(), fc.constantFrom('10.0.0.100', '10.0.0.101', 'fd00::100'));
  const policy: fc.Arbitrary<RouterPolicy> = fc.record({
    priority: fc.constantFrom(1010, 1009, 102),
    match: fc.oneof(
      fc.tuple(fc.constantFrom('node1', 'node2', 'Node1'), fc.constantFrom('ip4', 'ip6'), vip).map(([n, f, v]) => `inport == "rtos-${n}" && ${f}.dst == ${v}`),
      fc.string({ maxLength: 40 }),
    ),
    action: fc.constantFrom('reroute', 'allow', 'drop'),
    nexthop: fc.constantFrom('10.128.0.2', '10.128.0.9', 'fd01::2'),
  });
  fc.assert(
    fc.property(
      fc.array(policy, { maxLength: 8 }),
      fc.array(fc.constantFrom('10.0.0.100', '10.0.0.101', 'fd00::100'), { maxLength: 3 }),
      (policies, upVips) => {
        const plan = planReroutes({ node: 'node1', upVips, mp0: { 4: '10.128.0.2', 6: 'fd01::2' }, policies });
        for (const d of plan.del) assert.ok(ownPolicyVip('node1', d.match) !== undefined, d.match);
        for (const a of plan.add) assert.ok(ownPolicyVip('node1', a.match) !== undefined && !/[\n"]/.test(a.nexthop), a.match);
        return true;
      },
    ),
    { numRuns: 2000 },
  );
});
