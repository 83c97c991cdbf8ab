import { test } from 'node:test';
import assert from 'node:assert/strict';
import { instanceIdOf, mapInstancesToNodes } from './cluster-view.ts';
import { inst, node } from './cluster-fixtures.test-helpers.ts';

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
  const instances = [
    inst('id-a', [], { name: 'kks-k1-small-aaaaa' }),
    inst('id-b', [], { name: 'kks-k1-small-bbbbb' }),
    inst('id-c', [], { name: 'kks-k1-small-ccccc' }),
  ];
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

test('two instances with one name pair with no Node by that name: the name cannot tell them apart', () => {
  const m = mapInstancesToNodes([inst('id-a', [], { name: 'worker-1' }), inst('id-b', [], { name: 'worker-1' })], [node('worker-1', [])]);
  assert.equal(m.nodeOf.size, 0);
});
