import { test } from 'node:test';
import assert from 'node:assert/strict';
import { instanceIdOf, mapInstancesToNodes, selectClusterInstances } from './cluster-view.ts';
import { inst, node } from './routegc-fixtures.test-helpers.ts';

test('providerIDs of the OpenStack providers give the instance UUID; others give nothing', () => {
  const cases: [string | undefined, string | undefined][] = [
    ['openstack:///0b5e-uuid', '0b5e-uuid'],
    ['openstack://RegionOne/0b5e-uuid', '0b5e-uuid'],
    ['aws:///eu-west-1a/i-123', undefined],
    ['', undefined],
    [undefined, undefined],
  ];
  for (const [pid, want] of cases) assert.equal(instanceIdOf(pid), want, String(pid));
});

test('instances map to Nodes by providerID first and by name only for Nodes without one', () => {
  const instances = [inst('id-a', [], { name: 'kks-k1-small-aaaaa' }), inst('id-b', [], { name: 'kks-k1-small-bbbbb' }), inst('id-c', [], { name: 'kks-k1-small-ccccc' })];
  const nodes = [
    node('renamed-host', [], [], 'id-a'), // hostname differs from the server name: the UUID still pairs them
    node('kks-k1-small-bbbbb', [], []), // no providerID yet: paired by name
    node('kks-k1-small-ccccc', [], [], 'id-zzz'), // names another server: must not borrow id-c by name
  ];
  const m = mapInstancesToNodes(instances, nodes);
  assert.equal(m.nodeOf.get('id-a')?.name, 'renamed-host');
  assert.equal(m.nodeOf.get('id-b')?.name, 'kks-k1-small-bbbbb');
  assert.equal(m.nodeOf.get('id-c'), undefined);
});

test('the cluster\'s instances are those its Nodes name and those with its name prefix, not the whole project', () => {
  const servers = [inst('1', [], { name: 'kks-k1-small-aaaaa' }), inst('2', [], { name: 'other-vm' }), inst('3', [], { name: 'kks-k2-small-bbbbb' }), inst('4', [], { name: 'worker-x' }), inst('5', [], { name: 'by-uuid' })];
  const nodes = [node('worker-x', []), node('renamed', [], [], '5')];
  assert.deepEqual(selectClusterInstances(servers, nodes, ['kks-k1-']).map((s) => s.id), ['1', '4', '5']);
  assert.deepEqual(selectClusterInstances(servers, [], ['']).map((s) => s.id), [], 'an empty prefix matches nothing');
});
