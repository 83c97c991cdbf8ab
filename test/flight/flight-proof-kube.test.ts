// flight acts only on what it proves, as the operator runs it: ManagedClusters and their events and
// conditions in a real kube-apiserver, each cluster's Nodes (with Ready conditions) in a real
// kube-apiserver of its own, one OpenStack project in the emulator, time on an injected clock.
// - two ManagedClusters named k1 (namespaces proof-a and proof-b) sharing the project: neither
//   reboots, deletes, tags or stamps the other's servers, a person's kks-k1-small-debug is nobody's,
//   and both say OwnerConflict;
// - a registered Node protects its server: errored servers whose Nodes are Ready (by providerID, by
//   name, by InternalIP) are not deleted, a stale providerID is reported, a NotReady one is deleted;
// - a ManagedCluster re-created with a new UID says OwnerChanged, naming the old UID and the count,
//   and the kubeward.io/adopt-owner annotation takes the servers over.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '../../src/admin/metrics.ts';
import { ManualClock } from '../../src/base/clock.ts';
import { createSilentLogger } from '../../src/base/logger.ts';
import { EventRecorder } from '../../src/clients/kube/event-recorder.ts';
import { createKubeApi, type KubeApi } from '../../src/clients/kube/kube-api.ts';
import type { Node } from '../../src/clients/kube/kube-types.ts';
import { loadKubeConfig } from '../../src/clients/kube/load-kube-config.ts';
import { KINDS } from '../../src/clients/kube/resource-kinds.ts';
import { FLIGHT_CONDITION } from '../../src/controllers/flight/flight-conditions.ts';
import { createFlightMetrics } from '../../src/controllers/flight/flight-metrics.ts';
import { flightReconciler } from '../../src/controllers/flight/flight-reconciler.ts';
import type { ManagedCluster } from '../../src/controllers/managed-cluster/managed-cluster.ts';
import { ADOPT_OWNER_ANNOTATION, kubernikusClaim } from '../../src/controllers/managed-cluster/provisioner-claims.ts';
import { ensureNamespace } from '../../testkit/kube/kube-objects.ts';
import { useKubeCluster } from '../../testkit/kube/kube-cluster.ts';
import { kubeApiserverMissing, startKubeApiserver, type KubeTestServer } from '../../testkit/kube/kube-test-server.ts';
import { recordCalls } from '../routegc/kube-cluster-fixture.ts';
import { openCloud, type Cloud } from '../routegc/routegc-fixture.ts';

const missing = kubeApiserverMissing();
const MIN = 60_000;
const T0 = Date.parse('2026-06-01T12:00:00Z');
const DESTRUCTIVE = ['nova.reboot', 'nova.deleteServer', 'nova.addTag', 'nova.mergeMetadata'];

interface NodeSpec {
  name: string;
  ip: string;
  instanceId?: string;
  ready?: boolean;
}

/** Replaces every Node with these; each gets a Ready condition (True unless ready is false). */
async function putNodes(api: KubeApi, nodes: NodeSpec[]): Promise<void> {
  for (const n of (await api.nodes.list()).items) await api.nodes.delete(undefined, n.metadata.name);
  for (const n of nodes) {
    const created = await api.nodes.create({ metadata: { name: n.name }, spec: { providerID: n.instanceId && `openstack:///${n.instanceId}` } } as Node);
    const at = new Date(T0).toISOString();
    await api.nodes.replaceStatus({
      ...created,
      status: {
        addresses: [{ type: 'InternalIP', address: n.ip }],
        conditions: [
          {
            type: 'Ready',
            status: n.ready === false ? 'False' : 'True',
            reason: n.ready === false ? 'KubeletNotReady' : 'KubeletReady',
            message: '',
            lastTransitionTime: at,
          },
        ],
      },
    });
  }
}

/** A server with exactly this name (no fixture prefix: the pool grammar sees it as a person would name it). */
async function exactServer(c: Cloud, name: string, metadata?: Record<string, string>): Promise<{ id: string; ip: string }> {
  const created = await c.os.http.request<{ server: { id: string } }>('compute', {
    method: 'POST',
    path: '/servers',
    body: { server: { name, flavorRef: '1', imageRef: '00000000-0000-4000-8000-000000000001', networks: [{ uuid: c.net.networkId }], metadata } },
  });
  const id = created.body.server.id;
  const got = (await c.os.nova.getServer(id))!;
  return { id, ip: Object.values(got.addresses).flat()[0]!.addr };
}

describe('flight proves before it destroys, with real kube-apiservers and the OpenStack emulator', { skip: missing }, () => {
  const mgmt = useKubeCluster({ namespace: 'proof-a' });
  let other: KubeTestServer;
  let otherApi: KubeApi;
  before(async () => {
    await ensureNamespace(mgmt.api, 'proof-b');
    other = await startKubeApiserver();
    otherApi = createKubeApi(loadKubeConfig({ kind: 'file', path: other.kubeconfigPath }));
  });
  after(async () => {
    await other?.stop();
  });
  const clusters = () => mgmt.api.resource<ManagedCluster>(KINDS.managedCluster);

  async function managedCluster(namespace: string, name: string, annotations?: Record<string, string>): Promise<ManagedCluster> {
    const created = await clusters().create({
      metadata: { name, namespace, annotations },
      spec: {
        kubeconfigSecretRef: { name: 'unused' },
        cloudCredentialsSecretRef: { name: 'unused', cloud: 'x' },
        clusterCIDR: '100.100.0.0/16',
        openstack: { securityGroupName: `${name}-sg` },
        nodePools: [{ name: 'small' }],
      },
    });
    return clusters().replaceStatus({ ...created, status: { phase: 'Running' } });
  }

  /** The operator's flight for ManagedClusters whose Nodes live in `workload[namespace]`, each with its own call record. */
  function operator(c: Cloud, clock: ManualClock, workload: Record<string, KubeApi>) {
    const rec = new Map<string, ReturnType<typeof recordCalls>>();
    const log = createSilentLogger();
    const fl = flightReconciler({
      clusters: clusters(),
      clients: async (mc) => {
        const ns = mc.metadata.namespace!;
        if (!rec.has(ns)) rec.set(ns, recordCalls(c.os));
        return { kube: workload[ns]!, openstack: rec.get(ns)!.client };
      },
      events: new EventRecorder({ events: mgmt.api.events, component: 'kubeward-operator', clock, log }),
      metrics: createFlightMetrics(new Registry()),
      clock,
      log,
      intervalMs: 300_000,
      random: () => 0,
      settings: { maxMetadataWritesPerRound: 100 },
    });
    const signal = new AbortController().signal;
    return {
      round: (key: string) => fl(key, signal),
      /** "call id" of every reboot, deletion, tag and metadata write the cluster of this namespace sent. */
      destructive: (ns: string) => (rec.get(ns)?.log ?? []).filter((l) => DESTRUCTIVE.includes(l.call)).map((l) => `${l.call} ${String(l.args[0])}`),
    };
  }
  const events = async (ns: string, name: string, reason: string) =>
    (await mgmt.api.events.list(ns)).items.filter((e) => e.involvedObject.kind === 'ManagedCluster' && e.involvedObject.name === name && e.reason === reason);
  const condition = async (ns: string, name: string) => (await clusters().get(ns, name)).status?.conditions?.find((x) => x.type === FLIGHT_CONDITION);

  test("two ManagedClusters named k1 share a project: neither touches the other, a -debug server is nobody's, both say OwnerConflict", async (t) => {
    const clock = new ManualClock(T0);
    const c = await openCloud(t, { clock, timings: { serverBuildMs: 0, serverRebootMs: 0, serverDeleteMs: 0 } });
    const k1 = kubernikusClaim('k1').metadata;
    // Both clusters' servers carry Kubernikus's metadata for "k1" and names of the pool grammar.
    const a = [await exactServer(c, 'kks-k1-small-b2xq9', k1), await exactServer(c, 'kks-k1-small-c4zz7', k1)];
    const b = [await exactServer(c, 'kks-k1-small-d5ww8', k1), await exactServer(c, 'kks-k1-small-f6vv9', k1), await exactServer(c, 'kks-k1-small-g7tt2', k1)];
    const debug = await exactServer(c, 'kks-k1-small-debug');
    c.emu.store.servers.get(b[2]!.id)!.vm_state = 'error';
    await putNodes(
      mgmt.api,
      a.map((s, i) => ({ name: `a-${i}`, ip: s.ip, instanceId: s.id })),
    );
    await putNodes(
      otherApi,
      b.map((s, i) => ({ name: `b-${i}`, ip: s.ip, instanceId: s.id })),
    );
    await managedCluster('proof-a', 'k1');
    await managedCluster('proof-b', 'k1');
    const op = operator(c, clock, { 'proof-a': mgmt.api, 'proof-b': otherApi });
    for (let i = 0; i < 5; i++) {
      await op.round('proof-a/k1');
      await op.round('proof-b/k1');
      clock.advance(20 * MIN);
    }
    const ids = (list: { id: string }[]) => new Set(list.map((s) => s.id));
    const targets = (ns: string) => op.destructive(ns).map((x) => x.split(' ')[1]!);
    for (const id of targets('proof-a')) assert.ok(ids(a).has(id), `proof-a/k1 touched ${id}: ${op.destructive('proof-a').join('; ')}`);
    for (const id of targets('proof-b')) assert.ok(ids(b).has(id), `proof-b/k1 touched ${id}: ${op.destructive('proof-b').join('; ')}`);
    assert.ok(!targets('proof-a').includes(debug.id) && !targets('proof-b').includes(debug.id), "a person's -debug server is nobody's");
    assert.ok(
      ![...op.destructive('proof-a'), ...op.destructive('proof-b')].some((x) => /reboot|deleteServer/.test(x)),
      'every server has a Ready Node in its own cluster: nothing is rebooted or deleted',
    );
    const stamp = async (id: string) => (await c.os.nova.getServer(id))!.metadata;
    const mcA = await clusters().get('proof-a', 'k1');
    const mcB = await clusters().get('proof-b', 'k1');
    for (const s of a) assert.deepEqual([(await stamp(s.id))['kubeward:owner'], (await stamp(s.id))['kubeward:owner-ref']], [mcA.metadata.uid, 'proof-a/k1']);
    // The errored one is not running: flight labels running servers only.
    for (const s of b.slice(0, 2))
      assert.deepEqual([(await stamp(s.id))['kubeward:owner'], (await stamp(s.id))['kubeward:owner-ref']], [mcB.metadata.uid, 'proof-b/k1']);
    assert.equal((await stamp(debug.id))['kubeward:owner'], undefined);
    for (const [ns, theirs] of [
      ['proof-a', 'proof-b/k1'],
      ['proof-b', 'proof-a/k1'],
    ] as const) {
      const conflict = await events(ns, 'k1', 'OwnerConflict');
      assert.ok(conflict.length > 0, `${ns}/k1 has an OwnerConflict event`);
      assert.ok(
        conflict.some((e) => e.message?.includes(theirs)),
        `${ns}/k1's event names ${theirs}: ${conflict.map((e) => e.message).join(' | ')}`,
      );
    }
    await clusters().delete('proof-a', 'k1');
    await clusters().delete('proof-b', 'k1');
  });

  test('a Ready Node protects its errored server (by providerID, name or InternalIP), a stale providerID registers and is reported; a NotReady one does not protect', async (t) => {
    const clock = new ManualClock(T0);
    const c = await openCloud(t, { clock, timings: { serverBuildMs: 0, serverRebootMs: 0, serverDeleteMs: 0 } });
    const k2 = kubernikusClaim('k2').metadata;
    const names = ['byid', 'byname', 'byip', 'stale', 'notready', 'ok1', 'ok2', 'ok3', 'ok4'];
    const s = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await exactServer(c, `kks-k2-small-${n}`, k2)] as const)));
    // An earlier server of the name kks-k2-small-stale, gone: the Node still names it.
    const gone = await exactServer(c, 'kks-k2-small-gone0', k2);
    await c.os.nova.deleteServer(gone.id);
    for (const n of ['byid', 'byname', 'byip', 'notready']) c.emu.store.servers.get(s[n]!.id)!.vm_state = 'error';
    await putNodes(mgmt.api, [
      { name: 'n-byid', ip: '10.9.9.1', instanceId: s.byid!.id },
      { name: 'kks-k2-small-byname', ip: '10.9.9.2' },
      { name: 'n-byip', ip: s.byip!.ip },
      { name: 'kks-k2-small-stale', ip: s.stale!.ip, instanceId: gone.id },
      { name: 'n-notready', ip: s.notready!.ip, instanceId: s.notready!.id, ready: false },
      ...['ok1', 'ok2', 'ok3', 'ok4'].map((n) => ({ name: `n-${n}`, ip: s[n]!.ip, instanceId: s[n]!.id })),
    ]);
    await managedCluster('proof-a', 'k2');
    const op = operator(c, clock, { 'proof-a': mgmt.api });
    for (let i = 0; i < 4; i++) {
      clock.advance(20 * MIN);
      await op.round('proof-a/k2');
    }
    const destroyed = op.destructive('proof-a').filter((x) => /reboot|deleteServer/.test(x));
    assert.deepEqual(destroyed, [`nova.deleteServer ${s.notready!.id}`], 'only the errored server whose Node is NotReady goes, once');
    const reasons = (await events('proof-a', 'k2', 'ErroredInstanceNodeReady')).map((e) => e.message ?? '');
    for (const n of ['n-byid', 'kks-k2-small-byname', 'n-byip'])
      assert.ok(
        reasons.some((m) => m.includes(n)),
        `${n} protects its server: ${reasons.join(' | ')}`,
      );
    const stale = (await mgmt.api.events.list()).items.filter((e) => e.reason === 'StaleProviderID' && e.involvedObject.name === 'kks-k2-small-stale');
    assert.ok(stale.length > 0 && stale[0]!.message?.includes(gone.id), 'the stale providerID is reported on its Node');
    await clusters().delete('proof-a', 'k2');
  });

  test('a ManagedCluster re-created with a new UID says OwnerChanged (the old UID, the count) and changes nothing; the adopt-owner annotation takes the servers over', async (t) => {
    const clock = new ManualClock(T0);
    const c = await openCloud(t, { clock, timings: { serverBuildMs: 0, serverRebootMs: 0, serverDeleteMs: 0 } });
    const k5 = kubernikusClaim('k5').metadata;
    const reg = [await exactServer(c, 'kks-k5-small-r2r2r', k5), await exactServer(c, 'kks-k5-small-r3r3r', k5)];
    const unregistered = await exactServer(c, 'kks-k5-small-u4u4u', k5);
    await putNodes(
      mgmt.api,
      reg.map((x, i) => ({ name: `k5-${i}`, ip: x.ip, instanceId: x.id })),
    );
    const first = await managedCluster('proof-a', 'k5');
    const op = operator(c, clock, { 'proof-a': mgmt.api });
    await op.round('proof-a/k5');
    for (const x of [...reg, unregistered]) assert.equal((await c.os.nova.getServer(x.id))!.metadata['kubeward:owner'], first.metadata.uid);

    // A restore: the same ManagedCluster, a new UID.
    await clusters().delete('proof-a', 'k5');
    const second = await managedCluster('proof-a', 'k5');
    assert.notEqual(second.metadata.uid, first.metadata.uid);
    const op2 = operator(c, clock, { 'proof-a': mgmt.api });
    clock.advance(40 * MIN);
    await op2.round('proof-a/k5');
    await op2.round('proof-a/k5');
    const held = await condition('proof-a', 'k5');
    assert.equal(held?.status, 'False');
    assert.equal(held?.reason, 'OwnerChanged', held?.message);
    assert.match(held?.message ?? '', new RegExp(`3 server\\(s\\) carry owner id ${first.metadata.uid}`));
    assert.match(held?.message ?? '', new RegExp(`${ADOPT_OWNER_ANNOTATION}=${first.metadata.uid}`));
    assert.deepEqual(op2.destructive('proof-a'), [], 'nothing is rebooted, deleted or stamped while the owner changed');

    await clusters().patch('proof-a', 'k5', { metadata: { annotations: { [ADOPT_OWNER_ANNOTATION]: first.metadata.uid! } } });
    await op2.round('proof-a/k5');
    for (const x of [...reg, unregistered]) assert.equal((await c.os.nova.getServer(x.id))!.metadata['kubeward:owner'], second.metadata.uid, 're-stamped');
    assert.notEqual((await condition('proof-a', 'k5'))?.reason, 'OwnerChanged');
    assert.ok(
      op2.destructive('proof-a').includes(`nova.reboot ${unregistered.id}`),
      `the adopted unregistered server is repaired again: ${op2.destructive('proof-a').join('; ')}`,
    );
    await clusters().delete('proof-a', 'k5');
  });
});
