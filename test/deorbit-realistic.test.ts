// deorbit against a satellite that behaves as a real cluster does around storage: the real
// kube-apiserver with its default admission plugins and the real kube-controller-manager
// (pvc-protection, pv-protection, garbagecollector), a CSI stand-in that removes the PV as soon as
// Cinder accepts the delete (as external-provisioner with cinder-csi does), and a cloud controller
// stand-in that reuses an existing Octavia load balancer when a Service names one. Each test is a
// way deorbit reported "clean" while data remained, deleted what it must not, or waited for nothing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { kubeControllerManagerMissing } from '../testkit/kube/kube-test-server.ts';
import { Scenario, startHarness, type Harness, type ScenarioOptions } from '../testkit/kube/deorbit-harness.ts';
import { createBoundClaim, createService, ensureNamespace, resetSatellite } from '../testkit/kube/kube-objects.ts';
import { createBackupSnapshotClass, createMountingPod, createOwnedWorkload, resetWorkloads } from '../testkit/kube/workload-objects.ts';
import { noteTierSkip } from '../testkit/test-tiers.ts';
import { waitFor } from '../testkit/wait-for.ts';
import type { ManagedCluster } from '../src/controllers/managed-cluster/managed-cluster.ts';

const missing = kubeControllerManagerMissing();
noteTierSkip('kube-apiserver', missing && `realistic deorbit tier: ${missing}`);
const CSI = 'cinder.csi.openstack.org';
const S = 1000;
const MIN = 60 * S;
const NAMESPACES = ['apps', 'data'];

describe('deorbit against the real controller-manager, admission plugins and a cinder-csi-like provisioner', { skip: missing }, () => {
  let h: Harness;
  let current: Scenario | undefined;

  before(async () => {
    h = await startHarness({ realistic: true });
    for (const ns of NAMESPACES) await ensureNamespace(h.sat, ns);
    // The serviceaccount controller makes each namespace's "default" account; pods need it to pass admission.
    for (const ns of NAMESPACES) {
      await waitFor(() => h.sat.client.request('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`).then(() => true), {
        timeoutMs: 30_000,
        intervalMs: 100,
        what: `the default service account of ${ns}`,
      });
    }
  });
  after(async () => {
    await current?.close();
    await h?.stop();
  });

  async function scenario(o: ScenarioOptions): Promise<Scenario> {
    await current?.close();
    await resetWorkloads(h.sat, NAMESPACES);
    await resetSatellite(h.sat, NAMESPACES, 'v1');
    // pvc-protection may put its finalizer back between the strip and the delete: wait until all are gone.
    await waitFor(async () => (await h.sat.pvcs.list()).items.length === 0 && (await h.sat.pvs.list()).items.length === 0, {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'claims and volumes of the last test gone',
    });
    current = await Scenario.create(h, o);
    await current.createCluster();
    await current.reconcileNow();
    assert.equal(await current.hasFinalizer(), true, 'the finalizer is added while Running');
    return current;
  }

  const claimNames = async () => (await h.sat.pvcs.list()).items.map((c) => `${c.metadata.namespace}/${c.metadata.name}`).sort();
  const svcNames = async () => (await h.sat.services.list('apps')).items.map((s) => s.metadata.name).sort();
  const finalizerGone = (s: Scenario) => async () => !(await s.hasFinalizer());
  const condition = (mc: ManagedCluster | undefined) => mc?.status?.conditions?.find((c) => c.type === 'DeorbitComplete');

  test('the admission plugins and controllers are the real ones: a claim carries pvc-protection, a PV pv-protection', async () => {
    await scenario({ name: 'tier' });
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'probe', pvName: 'pv-probe', source: { csi: { driver: CSI, volumeHandle: 'vol-probe' } } });
    assert.deepEqual((await h.sat.pvcs.get('apps', 'probe')).metadata.finalizers, ['kubernetes.io/pvc-protection']);
    assert.deepEqual((await h.sat.pvs.get(undefined, 'pv-probe')).metadata.finalizers, ['kubernetes.io/pv-protection']);
  });

  test('wrong cluster: deleting one of two ManagedClusters that reach the same cluster refuses, with a condition and an event, and deletes nothing', async () => {
    const s = await scenario({ name: 'twin' });
    s.volume('vol-1');
    s.loadBalancer('lb-web', 'kube_service_k1_apps_web');
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'data-0', pvName: 'pv-1', source: { csi: { driver: CSI, volumeHandle: 'vol-1' } } });
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { finalizer: true });
    // The same cluster, described again in another namespace (a move, a copied Secret): the live one.
    const live = await s.createClusterIn('s-twin-live');
    await s.reconcileKey(`${live.metadata.namespace}/${live.metadata.name}`);
    await s.terminate();
    await s.drive(async () => s.clock.now() - s.deletedAtMs >= 5 * MIN, { maxVirtualMs: 6 * MIN });
    assert.deepEqual(await claimNames(), ['apps/data-0'], "the live cluster's claim stays");
    assert.deepEqual(await svcNames(), ['web'], 'and its LoadBalancer Service');
    assert.equal(await s.hasFinalizer(), true, 'the deleted ManagedCluster is held, not let go');
    const cond = condition(await s.get());
    assert.equal(cond?.reason, 'ClusterIdentityConflict');
    assert.match(cond!.message, /s-twin-live\/k1/);
    assert.ok(s.events.some((e) => e.reason === 'DeorbitRefused' && /s-twin-live\/k1/.test(e.message)));
  });

  test('wrong cluster: a kubeconfig that reaches another cluster than the one adopted is refused', async () => {
    const s = await scenario({ name: 'moved' });
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { finalizer: true });
    const adopted = (await s.get())!.status?.clusterIdentity;
    assert.ok(adopted?.kubeSystemUid, 'the identity is recorded when the cluster is adopted');
    // The Secret now points at the management cluster: another kube-system, another CA.
    await s.replaceKubeconfig(await s.mgmtKubeconfig());
    await s.terminate();
    await s.drive(async () => s.clock.now() - s.deletedAtMs >= 2 * MIN, { maxVirtualMs: 3 * MIN });
    assert.deepEqual(await svcNames(), ['web']);
    const cond = condition(await s.get());
    assert.equal(cond?.reason, 'ClusterIdentityChanged');
    assert.ok(s.events.some((e) => e.reason === 'DeorbitRefused' && e.message.includes(adopted.kubeSystemUid)));
  });

  test('volumes still deleting in Cinder keep deorbit waiting after their PVs are gone; error_deleting is retried a bounded number of times and then reported by ID', async () => {
    const s = await scenario({ name: 'cinder', settings: { maxCloudRetries: 2 } });
    s.volume('vol-slow');
    s.volume('vol-bad');
    s.emu.addDelay({ kind: 'volume-delete', id: 'vol-slow', delayMs: 20 * MIN });
    s.emu.addDelay({ kind: 'volume-delete', id: 'vol-bad', fails: true, delayMs: 10 * S });
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'slow', pvName: 'pv-slow', source: { csi: { driver: CSI, volumeHandle: 'vol-slow' } } });
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'bad', pvName: 'pv-bad', source: { csi: { driver: CSI, volumeHandle: 'vol-bad' } } });
    await s.terminate();
    await s.drive(async () => (await h.sat.pvs.list()).items.length === 0, { maxVirtualMs: 5 * MIN });
    assert.equal(s.emu.store.volumes.get('vol-slow')?.status, 'deleting', 'the PV went while Cinder still deletes');
    const doneAt = await s.drive(finalizerGone(s), { maxVirtualMs: 60 * MIN });
    assert.ok(
      !s.emu.store.volumes.has('vol-slow'),
      `not finished before Cinder answered 404 for vol-slow (finished at +${(doneAt - s.deletedAtMs) / MIN} min)`,
    );
    assert.equal(s.emu.store.volumes.get('vol-bad')?.status, 'error_deleting');
    const mc = (await s.get())!;
    assert.deepEqual(mc.status!.deorbit!.trackedVolumes?.slice().sort(), ['vol-bad', 'vol-slow'], 'the IDs waited on are in status');
    assert.notEqual(condition(mc)?.reason, 'Completed', 'not reported clean while a volume is left');
    assert.deepEqual(mc.status!.deorbit!.leftovers.volumes, ['vol-bad']);
    const retries = s.emu.requests.filter((r) => r.method === 'DELETE' && r.path.endsWith('/volumes/vol-bad')).length;
    assert.ok(retries >= 2 && retries <= 4, `the csi delete and then at most 2 retries by deorbit (${retries})`);
    assert.ok(s.events.some((e) => e.type === 'Warning' && /vol-bad/.test(e.message) && /error_deleting/.test(e.message)));
  });

  test('give-up counts from the first attempt: lifting termination protection after 24 h still deletes first, and the give-up lists what is left from a fresh look', async () => {
    const s = await scenario({ name: 'late', spec: { terminationProtection: true }, settings: { hangTimeoutMs: 60 * MIN } });
    s.volume('vol-1');
    s.emu.addDelay({ kind: 'volume-delete', id: 'vol-1', stuck: true });
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'data-0', pvName: 'pv-1', source: { csi: { driver: CSI, volumeHandle: 'vol-1' } } });
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { finalizer: true });
    s.loadBalancer('lb-web', 'kube_service_k1_apps_web');
    await s.terminate();
    await s.drive(async () => s.clock.now() - s.deletedAtMs >= 25 * 60 * MIN, { maxVirtualMs: 26 * 60 * MIN, maxStepMs: 30 * MIN, fixtures: false });
    const mc = (await s.get())!;
    await s.clusters.patch(mc.metadata.namespace, mc.metadata.name, { spec: { terminationProtection: false } });
    const liftedAt = s.clock.now();
    await s.reconcileNow();
    assert.equal(await s.hasFinalizer(), true, 'the first pass after the lift does not give up');
    assert.deepEqual(await claimNames(), [], 'it deleted the claim');
    const doneAt = await s.drive(finalizerGone(s), { maxVirtualMs: 90 * MIN });
    assert.ok(doneAt - liftedAt >= 60 * MIN, `the hang timeout counts from the first attempt (${(doneAt - liftedAt) / MIN} min)`);
    const st = (await s.get())!.status!.deorbit!;
    assert.ok(st.startedAt && Date.parse(st.startedAt) >= liftedAt, 'the first attempt is recorded in status');
    assert.deepEqual(st.leftovers.volumes, ['vol-1']);
    assert.match(s.events.at(-1)!.message, /volumes 1: vol-1/);
  });

  test('backups and kept objects survive: a backup-class snapshot and a claim labelled to keep are not deleted, and status lists them', async () => {
    const s = await scenario({ name: 'keep' });
    await createBackupSnapshotClass(h.sat, 'cinder-backup', CSI);
    s.volume('vol-1');
    s.volume('vol-kept');
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'data-0', pvName: 'pv-1', source: { csi: { driver: CSI, volumeHandle: 'vol-1' } } });
    await createBoundClaim(h.sat, { namespace: 'data', name: 'precious', pvName: 'pv-kept', source: { csi: { driver: CSI, volumeHandle: 'vol-kept' } } });
    await h.sat.pvcs.patch('data', 'precious', { metadata: { labels: { 'kubeward.io/deorbit': 'keep' } } });
    await h.sat.volumeSnapshots('v1').create({
      metadata: { name: 'nightly', namespace: 'apps' },
      spec: { volumeSnapshotClassName: 'cinder-backup', source: { persistentVolumeClaimName: 'data-0' } },
    });
    await s.terminate();
    await s.drive(finalizerGone(s), { maxVirtualMs: 10 * MIN });
    assert.deepEqual(
      (await h.sat.volumeSnapshots('v1').list()).items.map((x) => x.metadata.name),
      ['nightly'],
    );
    assert.deepEqual(await claimNames(), ['data/precious']);
    assert.ok(s.emu.store.volumes.has('vol-kept'));
    const st = (await s.get())!.status!.deorbit!;
    assert.deepEqual(st.kept, ['PersistentVolumeClaim data/precious', 'VolumeSnapshot apps/nightly']);
  });

  test('in-use claims make progress: the pod that mounts a claim and the Deployment behind it are deleted, budgeted and with events', async () => {
    const s = await scenario({ name: 'inuse' });
    s.volume('vol-1');
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'data-0', pvName: 'pv-1', source: { csi: { driver: CSI, volumeHandle: 'vol-1' } } });
    const { pod } = await createOwnedWorkload(h.sat, 'apps', 'db', 'data-0');
    await s.terminate();
    const doneAt = await s.drive(finalizerGone(s), { maxVirtualMs: 30 * MIN });
    assert.ok(doneAt - s.deletedAtMs <= 10 * MIN, `done in ${(doneAt - s.deletedAtMs) / MIN} min, not after 24 h`);
    assert.deepEqual(await claimNames(), []);
    assert.ok(!s.emu.store.volumes.has('vol-1'));
    assert.ok(s.events.some((e) => e.reason === 'SuccessfulDeorbitWorkload' && /Deployment apps\/db/.test(e.message)));
    assert.ok(s.events.some((e) => e.reason === 'SuccessfulDeorbitPod' && e.message.includes(`apps/${pod}`)));
  });

  test('in-use claims, configured not to delete workloads: which pods block which claims is reported at once, and deorbit gives up on them without waiting', async () => {
    const s = await scenario({ name: 'inuse-report', spec: { deorbit: { inUseClaims: 'Report' } } });
    s.volume('vol-1');
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'data-0', pvName: 'pv-1', source: { csi: { driver: CSI, volumeHandle: 'vol-1' } } });
    await createMountingPod(h.sat, 'apps', 'standalone', 'data-0');
    await s.terminate();
    const doneAt = await s.drive(finalizerGone(s), { maxVirtualMs: 10 * MIN });
    assert.ok(doneAt - s.deletedAtMs <= MIN, `reported within a minute (${(doneAt - s.deletedAtMs) / S} s), not after 24 h`);
    const ev = s.events.find((e) => e.reason === 'DeorbitClaimsInUse')!;
    assert.match(ev.message, /apps\/data-0: apps\/standalone/);
    const st = (await s.get())!.status!.deorbit!;
    assert.equal(st.selfDestructReason, 'ClaimsInUse');
    assert.deepEqual(st.claimsInUse, ['apps/data-0: apps/standalone']);
    assert.deepEqual(st.leftovers.volumes, ['vol-1'], 'the volume the claim holds is named as left');
    assert.ok(await h.sat.client.request('GET', '/api/v1/namespaces/apps/pods/standalone'), 'the pod stays');
    assert.ok(s.emu.store.volumes.has('vol-1'));
  });

  test('a reused Octavia load balancer (load-balancer-id annotation, not named for the Service) is neither waited on nor listed as debris', async () => {
    const s = await scenario({ name: 'shared', settings: { hangTimeoutMs: 60 * MIN } });
    s.loadBalancer('lb-shared', 'ingress-shared-by-three-clusters');
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { finalizer: true, lbId: 'lb-shared' });
    s.clock.advance(MIN); // it was there before deorbit started
    await s.terminate();
    const doneAt = await s.drive(finalizerGone(s), { maxVirtualMs: 60 * MIN });
    assert.ok(doneAt - s.deletedAtMs <= 5 * MIN, `finished in ${(doneAt - s.deletedAtMs) / MIN} min`);
    assert.ok(s.emu.store.loadBalancers.has('lb-shared'), 'the shared load balancer stays');
    const st = (await s.get())!.status!.deorbit!;
    assert.equal(st.step, 'done');
    assert.deepEqual(st.leftovers.loadBalancers, []);
    const named = s.events.filter((e) => e.message.includes('lb-shared') && e.type === 'Warning');
    assert.deepEqual(named, [], 'no warning names it');
  });

  test('a re-created LoadBalancer Service stops the pass with a condition naming its manager, and is not deleted again', async () => {
    const s = await scenario({ name: 'gitops', ccmDelayMs: 10 * S });
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { finalizer: true });
    s.loadBalancer('lb-web', 'kube_service_k1_apps_web');
    await s.terminate();
    await s.drive(async () => (await svcNames()).length === 0, { maxVirtualMs: 5 * MIN });
    // A GitOps agent puts it back.
    await h.sat.client.request('POST', '/api/v1/namespaces/apps/services', {
      query: { fieldManager: 'argocd-controller' },
      body: { metadata: { name: 'web', namespace: 'apps' }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } },
    });
    const from = s.clock.now();
    await s.drive(async () => s.clock.now() - from >= 5 * MIN, { maxVirtualMs: 6 * MIN });
    assert.deepEqual(await svcNames(), ['web'], 'deleted once, not churned');
    const cond = condition(await s.get());
    assert.equal(cond?.reason, 'ServiceRecreated');
    assert.match(cond!.message, /apps\/web.*argocd-controller/);
    assert.equal(s.events.filter((e) => e.reason === 'SuccessfulDeorbitService').length, 1);
  });
});
