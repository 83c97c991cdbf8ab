import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../base/clock.ts';
import { runDeorbitOnce } from './deorbit-once.ts';
import type { DeorbitPorts } from './deorbit-pass.ts';
import { DEFAULT_DEORBIT_SETTINGS } from './deorbit-types.ts';
import { CSI, pv, pvc } from './deorbit-fixtures.test-helpers.ts';

/** A cluster with one Cinder claim whose volume disappears `goneAfterMs` after the claim is deleted (never if undefined). */
function cluster(clock: ManualClock, goneAfterMs: number | undefined): DeorbitPorts {
  let claimDeletedAt: number | undefined;
  const volumeExists = () => claimDeletedAt === undefined || goneAfterMs === undefined || clock.now() - claimDeletedAt < goneAfterMs;
  return {
    satellite: {
      listSnapshots: async () => undefined,
      listSnapshotClasses: async () => undefined,
      listPvcs: async () => (claimDeletedAt === undefined ? [pvc('data', 'pv-1')] : []),
      listPvs: async () => (volumeExists() ? [pv('pv-1', { csi: CSI, handle: 'vol-1' }, { phase: claimDeletedAt === undefined ? 'Bound' : 'Released' })] : []),
      listServices: async () => [],
      delete: async () => {
        claimDeletedAt = clock.now();
        return 'deleted';
      },
      version: async () => 'v1.30.0',
    },
    cloud: {
      listVolumes: async () => (volumeExists() ? [{ id: 'vol-1', status: 'available' }] : []),
      listLoadBalancers: async () => undefined,
      listFloatingIps: async () => [],
      getVolume: async (id) => (volumeExists() && id === 'vol-1' ? { id, status: 'available' } : undefined),
      getLoadBalancer: async () => undefined,
      deleteVolume: async () => 'absent' as const,
      deleteLoadBalancer: async () => 'absent' as const,
    },
  };
}

async function run(goneAfterMs: number | undefined) {
  const clock = new ManualClock(0);
  const lines: string[] = [];
  const done = runDeorbitOnce({
    ports: cluster(clock, goneAfterMs),
    settings: { ...DEFAULT_DEORBIT_SETTINGS, hangTimeoutMs: 120_000 },
    target: { deletionStartedMs: 0, loadBalancerClusterName: 'k1' },
    clock,
    print: (l) => lines.push(l),
  });
  let result: Awaited<typeof done> | undefined;
  void done.then((r) => (result = r));
  for (let i = 0; i < 100 && !result; i++) {
    await new Promise((r) => setImmediate(r));
    clock.advance(5000);
  }
  return { result: result!, lines };
}

test('the one-shot loop prints progress and exits 0 once the volume is gone', async () => {
  const { result, lines } = await run(30_000);
  assert.equal(result.code, 0);
  assert.ok(lines.some((l) => l.includes('SuccessfulDeorbitPVC: deleted PersistentVolumeClaim apps/data')));
  assert.ok(
    lines.some((l) => /volumes 1/.test(l)),
    'the waiting state is printed',
  );
  assert.match(lines.at(-1)!, /done: /);
});

test('the one-shot loop exits 1 at its timeout and lists the leftovers', async () => {
  const { result, lines } = await run(undefined);
  assert.equal(result.code, 1);
  assert.ok(lines.some((l) => l.includes('gave up (timeout)')));
  assert.ok(lines.some((l) => l.includes('volumes 1: vol-1')));
});

test('Ctrl-C during a pass stops it between deletes: nothing after the signal is sent', async () => {
  const clock = new ManualClock(0);
  const ctl = new AbortController();
  const sent: string[] = [];
  const ports = cluster(clock, undefined);
  ports.satellite.listPvcs = async () => [pvc('a', 'pv-a'), pvc('b', 'pv-b')];
  ports.satellite.listPvs = async () => [pv('pv-a', { csi: CSI, handle: 'vol-a' }), pv('pv-b', { csi: CSI, handle: 'vol-b' })];
  ports.satellite.delete = async (action) => {
    sent.push(action.name);
    ctl.abort(new Error('interrupted'));
    return 'deleted';
  };
  await assert.rejects(
    runDeorbitOnce({
      ports,
      settings: DEFAULT_DEORBIT_SETTINGS,
      target: { deletionStartedMs: 0, loadBalancerClusterName: 'k1' },
      clock,
      print: () => undefined,
      signal: ctl.signal,
    }),
    /interrupted/,
  );
  assert.deepEqual(sent, ['a'], 'the second claim is not deleted after the signal');
});
