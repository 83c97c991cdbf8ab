import { test } from 'node:test';
import assert from 'node:assert/strict';
import { claimsToDelete, judgePv, judgeVolumes } from './volume-rules.ts';
import { CSI, pv, pvc } from './deorbit-fixtures.test-helpers.ts';

test('only bound claims on in-tree Cinder or configured CSI volumes are deleted', () => {
  const pvs = [
    pv('pv-csi', { csi: CSI, handle: 'vol-1' }),
    pv('pv-intree', { cinder: 'vol-2' }),
    pv('pv-other-csi', { csi: 'nfs.csi.k8s.io', handle: 'x' }),
    pv('pv-nfs', { nfs: true }),
  ];
  const cases: [string, ReturnType<typeof pvc>, boolean][] = [
    ['bound on a Cinder CSI PV', pvc('a', 'pv-csi'), true],
    ['bound on an in-tree Cinder PV', pvc('b', 'pv-intree'), true],
    ['bound on another CSI driver', pvc('c', 'pv-other-csi'), false],
    ['bound on NFS', pvc('d', 'pv-nfs'), false],
    ['pending, no volume', pvc('e', undefined, 'Pending'), false],
    ['bound but the PV is missing', pvc('f', 'pv-missing'), false],
    ['already being deleted', pvc('g', 'pv-csi', 'Bound', { deleting: true }), false],
  ];
  for (const [name, claim, want] of cases) assert.equal(claimsToDelete([claim], pvs, [CSI]).length === 1, want, name);
});

test('the CSI driver list is configurable', () => {
  const pvs = [pv('pv', { csi: 'custom.csi', handle: 'v' })];
  assert.equal(claimsToDelete([pvc('a', 'pv')], pvs, [CSI]).length, 0);
  assert.equal(claimsToDelete([pvc('a', 'pv')], pvs, [CSI, 'custom.csi']).length, 1);
});

test('each PV gets a verdict: only deletable volumes that still exist are waited for', () => {
  const ids = new Set(['vol-1']);
  const cases: [string, ReturnType<typeof pv>, string][] = [
    ['volume exists, claim going', pv('p', { csi: CSI, handle: 'vol-1' }), 'waiting'],
    ['released, Delete policy, volume exists', pv('p', { csi: CSI, handle: 'vol-1' }, { phase: 'Released' }), 'waiting'],
    ['volume already gone (D4)', pv('p', { csi: CSI, handle: 'vol-9' }), 'gone'],
    ['Failed PV (D5)', pv('p', { csi: CSI, handle: 'vol-1' }, { phase: 'Failed' }), 'failed'],
    ['Retain policy (D8)', pv('p', { csi: CSI, handle: 'vol-1' }, { policy: 'Retain', phase: 'Released' }), 'retained'],
    ['unclaimed static PV', pv('p', { cinder: 'vol-1' }, { phase: 'Available' }), 'unclaimed'],
    ['NFS', pv('p', { nfs: true }), 'not-cinder'],
  ];
  for (const [name, v, want] of cases) assert.equal(judgePv(v, ids, [CSI]), want, name);
});

test('the volume wait lists what blocks and what is retained, sorted', () => {
  const w = judgeVolumes(
    [pv('a', { csi: CSI, handle: 'vol-2' }), pv('b', { csi: CSI, handle: 'vol-1' }), pv('c', { cinder: 'vol-3' }, { policy: 'Retain' })],
    [
      { id: 'vol-1', status: 'available' },
      { id: 'vol-2', status: 'deleting' },
      { id: 'vol-3', status: 'in-use' },
    ],
    [CSI],
  );
  assert.deepEqual(w, { waitingFor: ['vol-1', 'vol-2'], retained: ['vol-3'] });
});
