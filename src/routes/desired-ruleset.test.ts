import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildDesiredRuleset, describeRulesFor, type DesiredInput } from './desired-ruleset.ts';
import type { VipState } from './vip-states.ts';

function vip(v: string, up: boolean): VipState {
  return { vip: v, family: v.includes(':') ? 6 : 4, file: up ? 'up' : 'down', up, reason: 'test' };
}

const base: DesiredInput = {
  provider: 'azure',
  vips: [vip('10.0.0.100', true), vip('10.0.0.101', false), vip('2001:db8:100::100', true)],
  ports: [6443],
  natTarget: 'redirect',
  nodeIps: {},
  healthCheckerCidrs: ['35.191.0.0/16', '130.211.0.0/22'],
};

test('azure redirects up VIPs in prerouting and output, per family, and nothing for down VIPs', () => {
  const { ruleset, problems } = buildDesiredRuleset(base);
  assert.deepEqual(problems, []);
  assert.deepEqual(
    ruleset.nat.map((r) => [r.hook, r.family, r.vips.join(' ')]),
    [
      ['prerouting', 4, '10.0.0.100'],
      ['output', 4, '10.0.0.100'],
      ['prerouting', 6, '2001:db8:100::100'],
      ['output', 6, '2001:db8:100::100'],
    ],
  );
  assert.deepEqual(ruleset.forwardDrop, [], 'azure has no health-checker drop');
});

test('gcp always redirects incoming traffic to every managed VIP, the node own traffic only while up', () => {
  const { ruleset } = buildDesiredRuleset({ ...base, provider: 'gcp' });
  const v4 = ruleset.nat.filter((r) => r.family === 4);
  assert.deepEqual(
    v4.map((r) => [r.hook, r.vips]),
    [
      ['prerouting', ['10.0.0.100', '10.0.0.101']],
      ['output', ['10.0.0.100']],
    ],
  );
  assert.deepEqual(ruleset.forwardDrop, [{ family: 4, sources: ['35.191.0.0/16', '130.211.0.0/22'] }]);
});

test('gcp with every VIP down keeps the incoming redirect and the drop, with no output rule', () => {
  const { ruleset } = buildDesiredRuleset({ ...base, provider: 'gcp', vips: [vip('10.0.0.100', false)] });
  assert.deepEqual(
    ruleset.nat.map((r) => r.hook),
    ['prerouting'],
  );
});

test('node-ip DNATs to the node address of the family and reports a family without one', () => {
  const { ruleset, problems } = buildDesiredRuleset({ ...base, natTarget: 'node-ip', nodeIps: { 4: '10.0.1.11' } });
  assert.ok(ruleset.nat.every((r) => r.family === 4 && r.to === '10.0.1.11'));
  assert.equal(problems.length, 1);
  assert.match(problems[0]!, /--node-ip for IPv6/);
});

test('the rules in force for a VIP are described in words for /status', () => {
  const { ruleset } = buildDesiredRuleset({ ...base, provider: 'gcp', ports: 'all' });
  assert.deepEqual(describeRulesFor(ruleset, '10.0.0.101'), ['prerouting redirect all ports']);
  assert.deepEqual(describeRulesFor(ruleset, '10.0.0.100'), ['prerouting redirect all ports', 'output redirect all ports']);
});

test('down-peer redirects become output dnat rules for exactly that VIP and the same ports, nothing else', () => {
  const input: DesiredInput = { ...base, provider: 'gcp', downPeerRedirects: [{ vip: '10.0.0.101', family: 4, to: '10.0.2.12' }] };
  const { ruleset, problems } = buildDesiredRuleset(input);
  assert.deepEqual(problems, []);
  const peer = ruleset.nat.filter((r) => r.peer);
  assert.deepEqual(peer, [{ hook: 'output', family: 4, vips: ['10.0.0.101'], ports: [6443], to: '10.0.2.12', peer: true }]);
  assert.deepEqual(describeRulesFor(ruleset, '10.0.0.101'), ['prerouting redirect tcp/6443', 'output dnat to 10.0.2.12 tcp/6443 (healthy peer while down)']);
  const without = buildDesiredRuleset({ ...input, downPeerRedirects: [] }).ruleset;
  assert.deepEqual(
    ruleset.nat.filter((r) => !r.peer),
    without.nat,
    'every other rule is unchanged',
  );
});

test('a down-peer redirect that could capture other traffic or loop is refused with a problem', () => {
  for (const [vip, to, why] of [
    ['10.0.0.99', '10.0.2.12', /not a managed VIP/],
    ['10.0.0.100', '10.0.2.12', /is up/],
    ['10.0.0.101', '127.0.0.1', /loopback/],
    ['10.0.0.101', '10.0.0.100', /itself a managed VIP/],
    ['10.0.0.101', '2001:db8:2::12', /other family/],
    ['10.0.0.101', '10.0.2.12 ip daddr 1.2.3.4', /not an IPv4/],
  ] as const) {
    const { ruleset, problems } = buildDesiredRuleset({ ...base, provider: 'gcp', downPeerRedirects: [{ vip, family: 4, to }] });
    assert.deepEqual(
      ruleset.nat.filter((r) => r.peer),
      [],
      `${vip} -> ${to}`,
    );
    assert.match(problems.join('\n'), why, `${vip} -> ${to}`);
  }
});
