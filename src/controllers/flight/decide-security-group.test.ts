// flight's pod-CIDR rules never open the group wider than the Nodes' pod CIDRs allow.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SecurityGroup } from '../../clients/openstack/openstack-types.ts';
import { node } from '../managed-cluster/cluster-fixtures.test-helpers.ts';
import { decideGroupRules } from './decide-security-group.ts';

const GROUP: SecurityGroup = { id: 'sg-1', name: 'k1-sg', description: '', project_id: 'p', security_group_rules: [], revision_number: 1 };
const NODES = [node('n1', ['10.0.0.1'], ['10.1.1.0/24']), node('n2', ['10.0.0.2'], ['10.1.2.0/24'])];

test('a cluster CIDR far wider than the Nodes’ pod CIDRs opens no rule, unless forced', () => {
  const wide = decideGroupRules(GROUP, '10.0.0.0/8', { nodes: NODES });
  assert.deepEqual(wide.actions, []);
  assert.equal(wide.finding?.reason, 'ClusterCIDRTooWide');
  assert.match(wide.finding?.message ?? '', /10\.0\.0\.0\/8 is 14 bits wider than 10\.1\.0\.0\/22/);
  assert.equal(decideGroupRules(GROUP, '10.0.0.0/8', { nodes: NODES, force: true }).actions.length, 3, 'forced: udp, tcp and icmp');
  assert.equal(decideGroupRules(GROUP, '10.1.0.0/16', { nodes: NODES }).actions.length, 3, 'a /16 for Nodes in a /22 is the cluster’s');
});

test('without the Node list no rule is opened (the pod CIDRs are unknown)', () => {
  assert.deepEqual(decideGroupRules(GROUP, '10.1.0.0/16', { nodes: undefined }), { actions: [] });
});
