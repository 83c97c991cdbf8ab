// routegc removes only what it can prove is nobody's, against a real kube-apiserver (the cluster's
// Nodes, the ManagedCluster and its status) and the OpenStack emulator (servers with their ports, a
// router shared by two clusters, a second writer on that router):
// - a route is orphaned only when no port on the router's networks holds its next hop, so a
//   neighbour's routes to its live servers stay under a wide cluster CIDR;
// - a cluster CIDR far wider than the Nodes' pod CIDRs is refused (condition, event) unless forced;
// - termination removes the cluster's routes and dangling ones, never a route another owner's port holds;
// - a plain full-list write never puts back a route another writer removed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '../../src/admin/metrics.ts';
import { ManualClock, systemClock } from '../../src/base/clock.ts';
import { createSilentLogger } from '../../src/base/logger.ts';
import { EventRecorder } from '../../src/clients/kube/event-recorder.ts';
import { KINDS } from '../../src/clients/kube/resource-kinds.ts';
import { kubeClusterNodes } from '../../src/controllers/managed-cluster/cluster-adapters.ts';
import { secretClusterClients } from '../../src/controllers/managed-cluster/cluster-clients.ts';
import type { ClusterEvent } from '../../src/controllers/managed-cluster/cluster-events.ts';
import type { ManagedCluster } from '../../src/controllers/managed-cluster/managed-cluster.ts';
import { RouteWriter } from '../../src/controllers/managed-cluster/route-writer.ts';
import { openStackRouteGcCloud } from '../../src/controllers/routegc/routegc-cloud.ts';
import { ROUTEGC_CONDITION } from '../../src/controllers/routegc/routegc-conditions.ts';
import { RouteGcRunner, type RouteGcTarget } from '../../src/controllers/routegc/routegc-cycle.ts';
import { createRouteGcMetrics } from '../../src/controllers/routegc/routegc-metrics.ts';
import { routeGcReconciler } from '../../src/controllers/routegc/routegc-reconciler.ts';
import { kubeApiserverMissing } from '../../testkit/kube/kube-test-server.ts';
import { useKubeCluster } from '../../testkit/kube/kube-cluster.ts';
import { setNodes } from './kube-cluster-fixture.ts';
import { openCloud, type Cloud } from './routegc-fixture.ts';

const missing = kubeApiserverMissing();
const NS = 'routegc-proof';

describe('routegc acts only on routes proven to be nobody else’s (real kube-apiserver, emulator)', { skip: missing }, () => {
  const mgmt = useKubeCluster({ namespace: NS });

  /**
   * Two clusters on one router and network: ours (server "a", Node node-a with pod CIDR 10.1.1.0/24)
   * and a neighbour (servers "n1", "n2", Nodes in its own API, routes 10.2.1.0/24 and 10.2.2.0/24),
   * plus a dangling route of ours whose server is gone (10.1.9.0/24 via 10.0.0.99, no port).
   */
  async function sharedRouter(c: Cloud) {
    const a = await c.server('a');
    const n1 = await c.server('n1');
    const n2 = await c.server('n2');
    await setNodes(mgmt.api, [{ name: 'node-a', ip: a.ip, podCIDR: '10.1.1.0/24', instanceId: a.id }]);
    const ours = { destination: '10.1.1.0/24', nexthop: a.ip };
    const dangling = { destination: '10.1.9.0/24', nexthop: '10.0.0.99' };
    const neighbours = [
      { destination: '10.2.1.0/24', nexthop: n1.ip },
      { destination: '10.2.2.0/24', nexthop: n2.ip },
    ];
    await c.os.neutron.updateRoutes(c.routerId, [ours, dangling, ...neighbours]);
    const text = (rs: { destination: string; nexthop: string }[]) => rs.map((x) => `${x.destination}>${x.nexthop}`).sort();
    return { a, ours: text([ours])[0]!, dangling: text([dangling])[0]!, neighbours: text(neighbours) };
  }

  function runner(c: Cloud, target: Partial<RouteGcTarget>) {
    const events: ClusterEvent[] = [];
    const gc = new RouteGcRunner(
      {
        cloud: openStackRouteGcCloud(c.os),
        writer: new RouteWriter(c.os.neutron),
        nodes: kubeClusterNodes(mgmt.api),
        emit: async (e) => void events.push(e),
        metrics: createRouteGcMetrics(new Registry()),
        log: createSilentLogger(),
        clock: systemClock,
      },
      {
        cluster: 'k1',
        routerId: c.routerId,
        clusterCidr: '10.0.0.0/8',
        identity: { ownerId: 'uid-k1', poolPrefixes: [] },
        routeLimit: 30,
        dryRun: false,
        ...target,
      },
    );
    return { gc, events };
  }

  test("with a /8 cluster CIDR (forced) on a shared router, the neighbour's routes to its live servers stay; only the dangling route goes", async (t) => {
    const c = await openCloud(t);
    const w = await sharedRouter(c);
    const { gc } = runner(c, { forceClusterCidr: true, allowWide: true });
    await gc.cycle();
    const second = await gc.cycle();
    assert.deepEqual(
      second.removed.map((f) => `${f.route.destination}>${f.route.nexthop}`),
      [w.dangling],
    );
    assert.deepEqual(await c.routes(), [w.ours, ...w.neighbours].sort(), "the neighbour's routes and ours stay");
    assert.equal(second.decision?.heldByPort.length, 2, 'both kept because a live port holds their next hop');
  });

  test('the next hop of a deleted server is free once its port is gone: then its route is an orphan', async (t) => {
    const c = await openCloud(t);
    const w = await sharedRouter(c);
    const { gc } = runner(c, { forceClusterCidr: true });
    const n1 = w.neighbours[0]!.split('>')[1]!;
    const port = (await c.os.neutron.listPorts({ fixedIp: n1 }))[0]!;
    await c.os.nova.deleteServer(port.device_id);
    c.emu.store.ports.delete(port.id); // the emulator deletes a server's ports with the server only when it settles
    await gc.cycle();
    await gc.cycle();
    assert.deepEqual(await c.routes(), [w.ours, w.neighbours[1]!].sort());
  });

  test('a cluster CIDR far wider than the Nodes’ pod CIDRs is refused in the operator (condition, event) until spec.forceClusterCIDR', async (t) => {
    const c = await openCloud(t);
    const w = await sharedRouter(c);
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    await mgmt.api.secrets.create({ metadata: { name: 'wide-kubeconfig', namespace: NS }, data: { kubeconfig: b64(mgmt.kubeconfigText) } });
    await mgmt.api.secrets.create({ metadata: { name: 'wide-cloud', namespace: NS }, data: { 'clouds.yaml': b64(c.emu.cloudsYaml('emu')) } });
    const clusters = mgmt.api.resource<ManagedCluster>(KINDS.managedCluster);
    const mc = await clusters.create({
      metadata: { name: 'wide', namespace: NS },
      spec: {
        kubeconfigSecretRef: { name: 'wide-kubeconfig' },
        cloudCredentialsSecretRef: { name: 'wide-cloud', cloud: 'emu' },
        clusterCIDR: '10.0.0.0/8',
        openstack: { routerID: c.routerId },
      },
    });
    await clusters.replaceStatus({ ...mc, status: { phase: 'Running' } });
    const log = createSilentLogger();
    const gc = routeGcReconciler({
      clusters,
      clients: secretClusterClients({ secrets: mgmt.api.secrets, log, clock: systemClock }),
      events: new EventRecorder({ events: mgmt.api.events, component: 'kubeward-operator', clock: systemClock, log }),
      metrics: createRouteGcMetrics(new Registry()),
      clock: systemClock,
      log,
      intervalMs: 300_000,
      random: () => 0,
    });
    const signal = new AbortController().signal;
    for (let i = 0; i < 3; i++) await gc(`${NS}/wide`, signal);
    const condition = (await clusters.get(NS, 'wide')).status?.conditions?.find((x) => x.type === ROUTEGC_CONDITION);
    assert.equal(condition?.status, 'False');
    assert.match(condition?.message ?? '', /ClusterCIDRTooWide.*10\.0\.0\.0\/8 is 16 bits wider than 10\.1\.1\.0\/24/);
    const refused = (await mgmt.api.events.list(NS)).items.filter((e) => e.involvedObject.uid === mc.metadata.uid && e.reason === 'RouteGCRefused');
    assert.ok(refused.length >= 1);
    assert.equal((await c.routes()).length, 4, 'nothing removed');

    await clusters.patch(NS, 'wide', { spec: { forceClusterCIDR: true } });
    await gc(`${NS}/wide`, signal);
    await gc(`${NS}/wide`, signal);
    assert.deepEqual(await c.routes(), [w.ours, ...w.neighbours].sort(), 'forced: the dangling route goes, the neighbour’s stay');
  });

  test("termination removes the cluster's route and the dangling one, and keeps the routes another owner's port holds", async (t) => {
    const c = await openCloud(t);
    const w = await sharedRouter(c);
    const { gc, events } = runner(c, { forceClusterCidr: true });
    const left = await gc.removeAll(new ManualClock(0), { timeoutMs: 0, pollMs: 0 });
    assert.deepEqual(left, [], 'nothing removable left: deorbit does not wait for the neighbour’s routes');
    assert.deepEqual(await c.routes(), w.neighbours);
    const kept = events.find((e) => e.reason === 'RouteTerminationKept');
    assert.match(kept?.message ?? '', /10\.2\.1\.0\/24 via .*10\.2\.2\.0\/24 via/);
  });

  describe('plain full-list writes with a second writer on the router (emulator routeWriteAfter)', () => {
    const orphan = { destination: '10.1.9.0/24', nexthop: '10.0.0.99' };

    test('a route the other writer removes between our read and our write is not put back', async (t) => {
      const c = await openCloud(t);
      const w = await sharedRouter(c);
      const [neighbour] = w.neighbours.map((x) => ({ destination: x.split('>')[0]!, nexthop: x.split('>')[1]! }));
      // Our first router read is answered, then the neighbour's controller removes its route.
      c.emu.addFault({
        service: 'network',
        method: 'GET',
        path: `^/routers/${c.routerId}$`,
        times: 1,
        routeWriteAfter: { routerId: c.routerId, remove: [neighbour!] },
      });
      const out = await new RouteWriter(c.os.neutron, { mode: 'plain' }).remove(c.routerId, [orphan]);
      assert.deepEqual(await c.routes(), [w.ours, w.neighbours[1]!].sort(), 'the orphan is gone and the removed route stays removed');
      assert.equal(out.conflicts, 1, 'the change under us is seen and counted');
    });

    test('a route the other writer removes right after our write is not written back', async (t) => {
      const c = await openCloud(t);
      const w = await sharedRouter(c);
      const [neighbour] = w.neighbours.map((x) => ({ destination: x.split('>')[0]!, nexthop: x.split('>')[1]! }));
      c.emu.addFault({
        service: 'network',
        method: 'PUT',
        path: `^/routers/${c.routerId}$`,
        times: 1,
        routeWriteAfter: { routerId: c.routerId, remove: [neighbour!] },
      });
      await new RouteWriter(c.os.neutron, { mode: 'plain' }).remove(c.routerId, [orphan]);
      assert.deepEqual(await c.routes(), [w.ours, w.neighbours[1]!].sort());
      const writes = c.emu.requests.filter((x) => x.method === 'PUT' && x.path.endsWith(`/routers/${c.routerId}`));
      assert.equal(writes.length, 2, 'the set-up write and ours: no repair write');
    });
  });
});
