// Deorbit scenarios D1-D10 of the Kubernikus reference note, against two real kube-apiservers
// (management and customer cluster) and the OpenStack emulator, in controller time (a manual clock).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { kubeApiserverMissing } from '../testkit/kube/kube-test-server.ts';
import { Scenario, startHarness, type Harness, type ScenarioOptions } from '../testkit/kube/deorbit-harness.ts';
import {
  createBoundClaim,
  createPendingClaim,
  createService,
  createSnapshotClasses,
  ensureNamespace,
  installCrd,
  removeCrd,
  resetSatellite,
  VOLUME_SNAPSHOT_CLASS_CRD,
  VOLUME_SNAPSHOT_CRD,
} from '../testkit/kube/kube-objects.ts';
import { startKubeFaultProxy } from '../testkit/kube/kube-fault-proxy.ts';
import { parse } from 'yaml';
import { KINDS } from '../src/clients/kube/resource-kinds.ts';

const missing = kubeApiserverMissing();
const CSI = 'cinder.csi.openstack.org';
const S = 1000;
const MIN = 60 * S;

describe('deorbit scenarios against a real kube-apiserver and the OpenStack emulator', { skip: missing }, () => {
  let h: Harness;
  let current: Scenario | undefined;

  before(async () => {
    h = await startHarness();
    await ensureNamespace(h.sat, 'apps');
    await ensureNamespace(h.sat, 'data');
  });
  after(async () => {
    await current?.close();
    await h?.stop();
  });

  /** A scenario with a Running cluster whose finalizer is in place, on a clean satellite. */
  async function scenario(o: ScenarioOptions): Promise<Scenario> {
    await current?.close();
    await resetSatellite(h.sat, ['apps', 'data'], 'v1').catch(() => resetSatellite(h.sat, ['apps', 'data']));
    current = await Scenario.create(h, o);
    await current.createCluster();
    await current.reconcileNow();
    assert.equal(await current.hasFinalizer(), true, 'the finalizer is added while Running, within one reconcile');
    return current;
  }

  const svcNames = async () => (await h.sat.services.list('apps')).items.map((s) => s.metadata.name).sort();
  const pvcNames = async () => (await h.sat.pvcs.list()).items.map((c) => c.metadata.name).sort();
  const finalizerGone = (s: Scenario) => async () => !(await s.hasFinalizer());

  test('D1 happy path: snapshots, Cinder claims and LB Services go; the rest stays; done between T0+60s and T0+90s', async () => {
    const s = await scenario({ name: 'd1' });
    s.volume('vol-1');
    s.volume('vol-2');
    s.loadBalancer('lb-web', 'kube_service_k1_apps_web');
    s.loadBalancer('lb-api', 'kube_service_k1_apps_api');
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'data-0', pvName: 'pv-1', source: { csi: { driver: CSI, volumeHandle: 'vol-1' } } });
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'data-1', pvName: 'pv-2', source: { csi: { driver: CSI, volumeHandle: 'vol-2' } } });
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'shared', pvName: 'pv-nfs', source: { nfs: { server: 'nfs.example', path: '/x' } } });
    await createPendingClaim(h.sat, 'apps', 'pending');
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { finalizer: true });
    await createService(h.sat, 'apps', 'api', 'LoadBalancer', { finalizer: true });
    await createService(h.sat, 'apps', 'internal', 'ClusterIP');
    await h.sat.volumeSnapshots('v1').create({
      metadata: { name: 'snap-1', namespace: 'apps' },
      spec: { volumeSnapshotClassName: 'cinder', source: { persistentVolumeClaimName: 'data-0' } },
    });
    // A backup tool's snapshot (another driver's class) is not the cloud's to clean up.
    await h.sat.volumeSnapshots('v1').create({
      metadata: { name: 'backup-1', namespace: 'apps' },
      spec: { volumeSnapshotClassName: 'backup', source: { persistentVolumeClaimName: 'data-0' } },
    });

    const t0 = await s.terminate();
    const doneAt = await s.drive(finalizerGone(s), { maxVirtualMs: 5 * MIN });
    assert.ok(doneAt - t0 >= 60 * S, `finished ${(doneAt - t0) / 1000}s after deletion, not before the CCM's 60 s`);
    assert.ok(doneAt - t0 <= 90 * S, `finished ${(doneAt - t0) / 1000}s after deletion, within ~90 s`);
    assert.deepEqual(await pvcNames(), ['pending', 'shared'], 'NFS and Pending claims untouched');
    assert.deepEqual(await svcNames(), ['internal'], 'the ClusterIP Service untouched');
    assert.deepEqual(
      (await h.sat.volumeSnapshots('v1').list()).items.map((x) => x.metadata.name),
      ['backup-1'],
      'only the Cinder-class snapshot was deleted',
    );
    assert.equal(s.emu.store.volumes.size, 0, 'Cinder volumes gone');
    assert.equal(s.emu.store.loadBalancers.size, 0, 'Octavia load balancers gone');
    const reasons = s.events.map((e) => e.reason);
    assert.deepEqual(reasons, [
      'SuccessfulDeorbitSnapshot',
      'SuccessfulDeorbitPVC',
      'SuccessfulDeorbitPVC',
      'SuccessfulDeorbitService',
      'SuccessfulDeorbitService',
      'WaitingForDeorbitSnapshots',
      'SuccessfulDeorbitSnapshots',
      'WaitingForDeorbitPVs',
      'SuccessfulDeorbitPVs',
      'WaitingForDeorbitLoadBalancers',
      'SuccessfulDeorbitLoadBalancers',
    ]);
    const mc = (await s.get())!;
    assert.equal(mc.status?.phase, 'Terminating');
    assert.equal(mc.status?.deorbit?.step, 'done');
    assert.equal(mc.status?.conditions?.find((c) => c.type === 'DeorbitComplete')?.status, 'True');
    const apiEvents = (await h.mgmt.events.list(s.ns)).items.filter((e) => e.involvedObject.name === 'k1');
    assert.equal(apiEvents.length, reasons.length, 'every event is also in the API');
  });

  test('D2 termination protection: nothing is deleted, the finalizer stays, no events', async () => {
    const s = await scenario({ name: 'd2', spec: { terminationProtection: true } });
    s.volume('vol-1');
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'data-0', pvName: 'pv-1', source: { csi: { driver: CSI, volumeHandle: 'vol-1' } } });
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { finalizer: true });
    await s.terminate();
    await s.drive(async () => false, { maxVirtualMs: 10 * MIN, maxStepMs: 30 * S }).catch(() => undefined);
    assert.equal(await s.hasFinalizer(), true);
    assert.deepEqual(await pvcNames(), ['data-0']);
    assert.deepEqual(await svcNames(), ['web']);
    assert.deepEqual(s.events, []);
    const cond = (await s.get())!.status?.conditions?.find((c) => c.type === 'DeorbitComplete');
    assert.equal(cond?.reason, 'TerminationProtected');
  });

  test('D3 stuck volume: attempts end after 10 min and retry; at T0+24h the finalizer goes and the volume is named as debris', async () => {
    const s = await scenario({ name: 'd3', settings: { pollIntervalMs: 5 * MIN } });
    s.volume('vol-1');
    s.emu.addDelay({ kind: 'volume-delete', id: 'vol-1', stuck: true });
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'data-0', pvName: 'pv-1', source: { csi: { driver: CSI, volumeHandle: 'vol-1' } } });
    const t0 = await s.terminate();
    const doneAt = await s.drive(finalizerGone(s), { maxVirtualMs: 25 * 60 * MIN, maxStepMs: 5 * MIN });
    assert.ok(doneAt - t0 >= 24 * 60 * MIN, 'not before the hang timeout');
    assert.ok(doneAt - t0 <= 24 * 60 * MIN + 6 * MIN, `soon after it (${(doneAt - t0) / MIN} min)`);
    const failed = s.events.filter((e) => e.reason === 'FailedDeorbitPVs');
    assert.ok(failed.length >= 100, `attempts kept failing and retrying (${failed.length})`);
    assert.ok(failed[1]!.atMs - failed[0]!.atMs <= 11 * MIN, 'about one attempt per 10 minutes');
    const last = s.events.at(-1)!;
    assert.equal(last.reason, 'SuccessfulDeorbitSelfDestruct');
    assert.match(last.message, /DeorbitHanging.*vol-1/);
    assert.equal(s.emu.store.volumes.get('vol-1')?.status, 'deleting', 'the volume is still there (debris)');
    const st = (await s.get())!.status!.deorbit!;
    assert.equal(st.selfDestructReason, 'DeorbitHanging');
    assert.deepEqual(st.leftovers.volumes, ['vol-1']);
    // Emulator tokens live 1 h of controller time: the client met 401s and authenticated again.
    const unauthorized = s.emu.requests.filter((r) => r.status === 401 && !r.path.includes('/auth/tokens'));
    assert.ok(unauthorized.length > 0, 'expired tokens were met');
    assert.ok(s.emu.requests.filter((r) => r.path.includes('/auth/tokens') && r.status === 201).length > 10, 'and renewed');
  });

  test('D4 volume already gone: a PV whose Cinder volume does not exist does not block', async () => {
    const s = await scenario({ name: 'd4' });
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'data-0', pvName: 'pv-9', source: { csi: { driver: CSI, volumeHandle: 'vol-9' } } });
    const t0 = await s.terminate();
    const doneAt = await s.drive(finalizerGone(s), { maxVirtualMs: 5 * MIN });
    assert.ok(doneAt - t0 <= 15 * S, `done in one or two passes (${(doneAt - t0) / 1000}s)`);
    assert.deepEqual(await pvcNames(), []);
  });

  test('D5 Failed PV: ignored even though its volume exists', async () => {
    const s = await scenario({ name: 'd5' });
    s.volume('vol-5');
    await createBoundClaim(h.sat, {
      namespace: 'apps',
      name: 'data-0',
      pvName: 'pv-5',
      source: { csi: { driver: CSI, volumeHandle: 'vol-5' } },
      pvPhase: 'Failed',
    });
    const t0 = await s.terminate();
    const doneAt = await s.drive(finalizerGone(s), { maxVirtualMs: 5 * MIN, fixtures: false });
    assert.ok(doneAt - t0 <= 15 * S);
    assert.ok(s.emu.store.volumes.has('vol-5'));
  });

  test('D6 API failures: a 60 s run of ServerTimeout is retried; plain-text 500s sustained for 2 min end in APIUnavailable', async () => {
    const cfg = parseKubeconfig(h.satKubeconfig);
    const proxy = await startKubeFaultProxy({ server: cfg.server, ca: cfg.ca });
    try {
      const s = await scenario({ name: 'd6', satKubeconfig: proxy.kubeconfig(cfg.token), ccmDelayMs: 24 * 60 * MIN });
      s.loadBalancer('lb-web', 'kube_service_k1_apps_web');
      await createService(h.sat, 'apps', 'web', 'LoadBalancer', { finalizer: true });
      const t0 = await s.terminate();
      await s.drive(async () => s.clock.now() - t0 >= 20 * S, { maxVirtualMs: MIN });
      proxy.mode = 'status-timeout';
      await s.drive(async () => s.clock.now() - t0 >= 80 * S, { maxVirtualMs: 2 * MIN });
      assert.ok(proxy.faulted > 0);
      assert.ok(
        s.errors.some((e) => /ServerTimeout|cannot complete/.test(e)),
        'the failures were seen',
      );
      proxy.mode = 'pass';
      await s.drive(async () => s.clock.now() - t0 >= 200 * S, { maxVirtualMs: 3 * MIN });
      assert.equal(await s.hasFinalizer(), true, 'a minute of failures long after deletion does not give up');
      assert.equal((await s.get())!.status?.deorbit?.apiFailingSince, undefined, 'the streak ended with a success');
      proxy.mode = 'text-500';
      const failingFrom = s.clock.now();
      const doneAt = await s.drive(finalizerGone(s), { maxVirtualMs: 10 * MIN });
      assert.ok(doneAt - failingFrom >= 120 * S, `gave up only after 2 min of failures (${(doneAt - failingFrom) / 1000}s)`);
      assert.ok(doneAt - failingFrom <= 200 * S, `and soon after (${(doneAt - failingFrom) / 1000}s)`);
      const st = (await s.get())!.status!.deorbit!;
      assert.equal(st.selfDestructReason, 'APIUnavailable');
      assert.deepEqual(st.leftovers.loadBalancers, ['lb-web'], 'the load balancer is recorded as debris');
      assert.match(s.events.at(-1)!.message, /APIUnavailable.*lb-web/);
    } finally {
      await proxy.close();
    }
  });

  test('D7 legacy cluster (1.16): the LB Service wait ends at T0+5min although its finalizer stays', async () => {
    const s = await scenario({ name: 'd7', spec: { version: '1.16.15' }, ccmRemovesFinalizer: false, ccmDelayMs: 10 * S });
    s.loadBalancer('lb-web', 'kube_service_k1_apps_web');
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { finalizer: true });
    const t0 = await s.terminate();
    const doneAt = await s.drive(finalizerGone(s), { maxVirtualMs: 10 * MIN });
    assert.ok(doneAt - t0 >= 5 * MIN, `not before 5 min (${(doneAt - t0) / 1000}s)`);
    assert.ok(doneAt - t0 <= 5 * MIN + 20 * S, `right after (${(doneAt - t0) / 1000}s)`);
    assert.deepEqual(await svcNames(), ['web'], 'the Service is still held by its finalizer');
  });

  test('D8 Retain PV: the claim is deleted, the volume stays, it is reported and does not block', async () => {
    const s = await scenario({ name: 'd8' });
    s.volume('vol-8');
    await createBoundClaim(h.sat, {
      namespace: 'apps',
      name: 'data-0',
      pvName: 'pv-8',
      source: { csi: { driver: CSI, volumeHandle: 'vol-8' } },
      reclaimPolicy: 'Retain',
    });
    const t0 = await s.terminate();
    const doneAt = await s.drive(finalizerGone(s), { maxVirtualMs: 5 * MIN });
    assert.ok(doneAt - t0 <= 20 * S, `not blocked (${(doneAt - t0) / 1000}s)`);
    assert.deepEqual(await pvcNames(), []);
    await s.csi.step();
    assert.equal((await h.sat.pvs.get(undefined, 'pv-8')).status?.phase, 'Released');
    assert.ok(s.emu.store.volumes.has('vol-8'));
    assert.deepEqual((await s.get())!.status!.deorbit!.retainedVolumes, ['vol-8']);
    assert.ok(s.events.some((e) => e.reason === 'RetainedDeorbitVolumes' && e.message.includes('vol-8')));
  });

  test('D10 Octavia check: a Service gone but its load balancer stuck in PENDING_DELETE or ERROR keeps deorbit waiting and is reported', async () => {
    const s = await scenario({ name: 'd10', settings: { hangTimeoutMs: 30 * MIN } });
    s.loadBalancer('lb-stuck', 'kube_service_k1_apps_web', { fip: 'fip-1' });
    s.emu.addDelay({ kind: 'lb-delete', id: 'lb-stuck', stuck: true });
    s.loadBalancer('lb-error', 'kube_service_k1_apps_old', { status: 'ERROR' });
    s.emu.addDelay({ kind: 'lb-delete', id: 'lb-error', fails: true }); // deorbit's own deletes end in ERROR again
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { lbId: 'lb-stuck' });
    await createService(h.sat, 'apps', 'old', 'LoadBalancer'); // seen once, so its exact LB name is the cluster's
    await s.os.octavia.deleteLoadBalancer('lb-stuck', { cascade: true });
    const t0 = await s.terminate();
    await s.drive(async () => s.clock.now() - t0 >= 10 * MIN, { maxVirtualMs: 11 * MIN });
    assert.equal(await s.hasFinalizer(), true, 'still waiting after 10 min');
    assert.deepEqual(await svcNames(), [], 'the Service itself is long gone');
    const mc = (await s.get())!;
    assert.deepEqual(mc.status!.deorbit!.leftovers.loadBalancers, ['lb-error', 'lb-stuck']);
    assert.match(mc.status!.conditions!.find((c) => c.type === 'DeorbitComplete')!.message, /lb-error, lb-stuck/);
    await s.drive(finalizerGone(s), { maxVirtualMs: 30 * MIN });
    assert.match(s.events.at(-1)!.message, /load balancers 2: lb-error, lb-stuck; floating IPs 1: fip-1/);
    const retried = s.emu.requests.filter((r) => r.method === 'DELETE' && r.path.includes('/loadbalancers/lb-error')).length;
    assert.equal(retried, 3, 'the ERROR load balancer was deleted again three times, then named');
    assert.ok(s.events.some((e) => e.reason === 'FailedDeorbitCloudDelete' && e.message.includes('lb-error')));
  });

  test('D9 no VolumeSnapshot API: nothing to delete, deorbit finishes normally', async () => {
    // The group leaves discovery only once both of its CRDs are gone.
    await h.sat.client.request('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/volumesnapshotclasses.snapshot.storage.k8s.io');
    await removeCrd(h.sat, 'volumesnapshots.snapshot.storage.k8s.io', 'snapshot.storage.k8s.io');
    try {
      const s = await scenario({ name: 'd9' });
      s.volume('vol-1');
      await createBoundClaim(h.sat, { namespace: 'apps', name: 'data-0', pvName: 'pv-1', source: { csi: { driver: CSI, volumeHandle: 'vol-1' } } });
      const t0 = await s.terminate();
      const doneAt = await s.drive(finalizerGone(s), { maxVirtualMs: 5 * MIN });
      assert.ok(doneAt - t0 <= 60 * S);
      assert.ok(s.events.some((e) => e.reason === 'SuccessfulDeorbitSnapshots'));
      assert.match(s.events.find((e) => e.reason === 'WaitingForDeorbitSnapshots')!.message, /no VolumeSnapshot API/);
      assert.deepEqual(
        s.errors.filter((e) => /snapshot/i.test(e)),
        [],
        'the missing API never failed an attempt',
      );
    } finally {
      await installCrd(h.sat, VOLUME_SNAPSHOT_CRD);
      await installCrd(h.sat, VOLUME_SNAPSHOT_CLASS_CRD);
      await createSnapshotClasses(h.sat);
    }
  });

  test('OpenStack 5xx: Cinder failing for 5 min fails passes (recorded) but never gives up; the cluster finishes once Cinder is back', async () => {
    const s = await scenario({ name: 'os5xx' });
    s.volume('vol-1');
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'data-0', pvName: 'pv-1', source: { csi: { driver: CSI, volumeHandle: 'vol-1' } } });
    const fault = s.emu.addFault({ service: 'volume', path: '^/[^/]+/volumes/detail', status: 503, message: 'cinder is down' });
    const t0 = await s.terminate();
    await s.drive(async () => s.clock.now() - t0 >= 5 * MIN, { maxVirtualMs: 6 * MIN, fixtures: false });
    assert.equal(await s.hasFinalizer(), true, 'a cloud outage is not a reason to give up');
    assert.match((await s.get())!.status!.deorbit!.lastError!, /cloud: .*503/);
    assert.ok(fault.hits >= 5, `Cinder was asked again and again (${fault.hits})`);
    s.emu.faults.remove(fault.id);
    const doneAt = await s.drive(finalizerGone(s), { maxVirtualMs: 10 * MIN });
    assert.ok(doneAt > t0 + 5 * MIN);
    assert.equal((await s.get())!.status!.deorbit!.step, 'done');
  });

  test('OpenStack hang and revoked tokens: a hung Octavia call is timed out and retried, a revoked token is renewed', async () => {
    const s = await scenario({ name: 'oshang', ccmDelayMs: 20 * S });
    s.loadBalancer('lb-web', 'kube_service_k1_apps_web');
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { finalizer: true });
    s.emu.addFault({ service: 'load-balancer', method: 'GET', path: '^/lbaas/loadbalancers$', hang: true, times: 1 });
    const t0 = await s.terminate();
    await s.drive(async () => s.clock.now() - t0 >= 10 * S, { maxVirtualMs: MIN });
    s.emu.revokeTokens();
    const doneAt = await s.drive(finalizerGone(s), { maxVirtualMs: 5 * MIN });
    assert.ok(doneAt - t0 <= 60 * S, `finished normally (${(doneAt - t0) / 1000}s)`);
    assert.ok(
      s.emu.requests.some((r) => r.status === 'hang'),
      'the hang happened',
    );
    assert.ok(
      s.emu.requests.some((r) => r.status === 401),
      'the revoked token was refused',
    );
    assert.deepEqual(s.errors, [], 'neither failed a pass: the client retried and re-authenticated');
  });

  // ---- the harms (docs/test-catalogue.md): what deorbit must never do ----

  test('harm 7: a ManagedCluster registered by hand (no deletionPolicy) is deleted: the finalizer goes, nothing in the cluster or the cloud is touched', async () => {
    const s = await scenario({ name: 'h7orphan', spec: { deletionPolicy: undefined } });
    assert.equal((await s.get())!.spec.deletionPolicy, 'Orphan', 'the CRD defaults the policy to Orphan');
    s.volume('vol-1');
    s.loadBalancer('lb-web', 'kube_service_k1_apps_web');
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'data-0', pvName: 'pv-1', source: { csi: { driver: CSI, volumeHandle: 'vol-1' } } });
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { finalizer: true });
    await s.terminate();
    await s.drive(finalizerGone(s), { maxVirtualMs: MIN });
    assert.deepEqual(await pvcNames(), ['data-0'], 'the live cluster keeps its claim');
    assert.deepEqual(await svcNames(), ['web'], 'and its LoadBalancer Service');
    assert.ok(s.emu.store.volumes.has('vol-1') && s.emu.store.loadBalancers.has('lb-web'));
    assert.deepEqual(
      s.events.map((e) => e.reason),
      ['DeorbitSkipped'],
    );
    assert.match(s.events[0]!.message, /deletionPolicy is Orphan/);
    assert.equal(s.emu.requests.filter((r) => r.method !== 'GET' && !r.path.includes('/auth/tokens')).length, 0, 'nothing destructive sent to OpenStack');
  });

  test('harm 7: the CRD refuses a deletionPolicy that is neither Delete nor Orphan', async () => {
    await ensureNamespace(h.mgmt, 'h7crd');
    await assert.rejects(
      h.mgmt.resource(KINDS.managedCluster).create({
        metadata: { name: 'bad', namespace: 'h7crd' },
        spec: { kubeconfigSecretRef: { name: 'k' }, cloudCredentialsSecretRef: { name: 'c', cloud: 'x' }, deletionPolicy: 'Destroy' },
      } as never),
      /deletionPolicy|Unsupported value/,
    );
  });

  test('harm 6: Cinder answering 200 with {}, an HTML page or a paging loop holds deorbit (named in a condition and an event) while the volume exists', async () => {
    const s = await scenario({ name: 'h6body', csiDelayMs: 24 * 60 * MIN });
    s.volume('vol-1');
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'data-0', pvName: 'pv-1', source: { csi: { driver: CSI, volumeHandle: 'vol-1' } } });
    const t0 = await s.terminate();
    await s.drive(async () => s.clock.now() - t0 >= 20 * S, { maxVirtualMs: MIN, fixtures: false });
    // The claim is deleted (its PV Released), the volume is still there: now Cinder's answers go bad.
    await h.sat.pvs.replaceStatus({ ...(await h.sat.pvs.get(undefined, 'pv-1')), status: { phase: 'Released' } });
    const loop = JSON.stringify({
      volumes: [{ id: 'vol-x', status: 'available' }],
      volumes_links: [{ rel: 'next', href: 'http://cinder.internal/v3/p/volumes/detail?marker=vol-x' }],
    });
    for (const [what, body, contentType] of [
      ['empty object', '{}', undefined],
      ['HTML page', '<html><body>Maintenance</body></html>', 'text/html'],
      ['paging loop', loop, undefined],
    ] as const) {
      const fault = s.emu.addFault({ service: 'volume', method: 'GET', path: '/volumes/detail', body, contentType });
      const from = s.clock.now();
      await s.drive(async () => s.clock.now() - from >= 5 * MIN, { maxVirtualMs: 6 * MIN, fixtures: false });
      assert.equal(await s.hasFinalizer(), true, `${what}: never finished while vol-1 exists`);
      const mc = (await s.get())!;
      assert.notEqual(mc.status!.deorbit!.step, 'done', what);
      assert.equal(mc.status!.conditions!.find((c) => c.type === 'DeorbitComplete')!.reason, 'CloudAnswerUnreadable', what);
      assert.ok(fault.hits > 0, what);
      s.emu.faults.remove(fault.id);
    }
    const held = s.events.filter((e) => e.reason === 'DeorbitHeld');
    assert.ok(held.length >= 1 && /CloudAnswerUnreadable/.test(held[0]!.message), 'a DeorbitHeld event names the reason');
    s.emu.store.volumes.delete('vol-1');
    await s.drive(finalizerGone(s), { maxVirtualMs: 5 * MIN, fixtures: false });
    assert.equal((await s.get())!.status!.deorbit!.step, 'done', 'readable again and the volume gone: finished');
  });

  test('harm 6: a well-formed but short Cinder list (the volume left out) does not make the volume gone: a GET by ID finds it', async () => {
    const s = await scenario({ name: 'h6short', csiDelayMs: 24 * 60 * MIN });
    s.volume('vol-1');
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'data-0', pvName: 'pv-1', source: { csi: { driver: CSI, volumeHandle: 'vol-1' } } });
    s.emu.addFault({ service: 'volume', method: 'GET', path: '/volumes/detail', body: '{"volumes": []}' });
    const t0 = await s.terminate();
    await s.drive(async () => s.clock.now() - t0 >= 3 * MIN, { maxVirtualMs: 4 * MIN, fixtures: false });
    assert.equal(await s.hasFinalizer(), true, 'still waiting for vol-1');
    assert.deepEqual((await s.get())!.status!.deorbit!.leftovers.volumes, ['vol-1']);
    assert.ok(
      s.emu.requests.some((r) => r.method === 'GET' && /\/volumes\/vol-1$/.test(r.path)),
      'asked Cinder for vol-1 itself',
    );
  });

  test('harm 10: load balancers of cluster k1_x, of a Service never seen, or named for the shared default "kubernetes" are not waited for', async () => {
    const s = await scenario({ name: 'h10', settings: { hangTimeoutMs: 30 * MIN }, ccmDelayMs: 10 * S });
    s.loadBalancer('lb-ours', 'kube_service_k1_apps_web');
    s.loadBalancer('lb-k1x', 'kube_service_k1_x_apps_web'); // cluster "k1_x": the old prefix matched it
    s.loadBalancer('lb-unseen', 'kube_service_k1_apps_gone'); // no such Service in this cluster
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { finalizer: true });
    const t0 = await s.terminate();
    const doneAt = await s.drive(finalizerGone(s), { maxVirtualMs: 5 * MIN });
    assert.ok(doneAt - t0 <= 60 * S, `finished normally (${(doneAt - t0) / 1000}s), not at the hang timeout`);
    const st = (await s.get())!.status!.deorbit!;
    assert.equal(st.step, 'done');
    assert.deepEqual([...s.emu.store.loadBalancers.keys()].sort(), ['lb-k1x', 'lb-unseen'], 'only ours went (the CCM fixture deleted it)');
  });

  test("harm 10: with the shared default cluster name, another cluster's kube_service_kubernetes_* load balancer is not ours; the annotated one is", async () => {
    const s = await scenario({
      name: 'h10def',
      spec: { openstack: { loadBalancerClusterName: 'kubernetes' } },
      settings: { hangTimeoutMs: 30 * MIN },
      ccmDelayMs: 24 * 60 * MIN,
    });
    s.loadBalancer('lb-foreign', 'kube_service_kubernetes_apps_web'); // a neighbour on defaults, same namespace and name
    s.loadBalancer('lb-ours', 'kube_service_kubernetes_apps_web'); // the same name: only the annotated ID tells them apart
    s.emu.addDelay({ kind: 'lb-delete', id: 'lb-ours', stuck: true });
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { lbId: 'lb-ours' });
    await s.os.octavia.deleteLoadBalancer('lb-ours', { cascade: true });
    const t0 = await s.terminate();
    await s.drive(async () => s.clock.now() - t0 >= 3 * MIN, { maxVirtualMs: 4 * MIN });
    const st = (await s.get())!.status!.deorbit!;
    assert.deepEqual(st.leftovers.loadBalancers, ['lb-ours'], "waits for the annotated one only, not the neighbour's");
    assert.ok(
      s.events.some((e) => e.reason === 'UnprovenDeorbitLoadBalancerNames' && /shared default/.test(e.message)),
      'says that names prove nothing here',
    );
  });

  test('budget: seven LoadBalancer Services are deleted at most three per pass', async () => {
    const s = await scenario({ name: 'budget', settings: { maxDeletesPerPass: 3 } });
    for (let i = 0; i < 7; i++) await createService(h.sat, 'apps', `svc-${i}`, 'LoadBalancer');
    await s.terminate();
    await s.reconcileNow();
    assert.equal((await svcNames()).length, 4, 'three went in the first pass');
    await s.reconcileNow();
    assert.equal((await svcNames()).length, 1, 'three more in the second');
    await s.reconcileNow();
    assert.deepEqual(await svcNames(), []);
    assert.equal(s.events.filter((e) => e.reason === 'SuccessfulDeorbitService').length, 7);
  });
});

function parseKubeconfig(text: string): { server: string; ca: string; token: string } {
  const doc = parse(text) as { clusters: { cluster: { server: string; 'certificate-authority-data': string } }[]; users: { user: { token: string } }[] };
  return {
    server: doc.clusters[0]!.cluster.server,
    ca: Buffer.from(doc.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString('utf8'),
    token: doc.users[0]!.user.token,
  };
}
