// routegc's and flight's operator reconcilers against a real kube-apiserver (management and cluster
// in one) and the OpenStack emulator: clients from the ManagedCluster's Secrets, events on the
// ManagedCluster, skips outside Running, and the termination clean-up once the cluster is being deleted
// (only when deorbit's rule asks for one: deletionPolicy Delete or Terminating, never for Orphan).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '../../src/admin/metrics.ts';
import { systemClock } from '../../src/base/clock.ts';
import { createSilentLogger } from '../../src/base/logger.ts';
import { EventRecorder } from '../../src/clients/kube/event-recorder.ts';
import type { Node } from '../../src/clients/kube/kube-types.ts';
import { KINDS } from '../../src/clients/kube/resource-kinds.ts';
import { secretClusterClients } from '../../src/controllers/managed-cluster/cluster-clients.ts';
import type { ManagedCluster } from '../../src/controllers/managed-cluster/managed-cluster.ts';
import { routeGcReconciler } from '../../src/controllers/routegc/routegc-reconciler.ts';
import { createRouteGcMetrics } from '../../src/controllers/routegc/routegc-metrics.ts';
import { flightReconciler } from '../../src/controllers/flight/flight-reconciler.ts';
import { createFlightMetrics } from '../../src/controllers/flight/flight-metrics.ts';
import { kubeApiserverMissing } from '../../testkit/kube/kube-test-server.ts';
import { useKubeCluster } from '../../testkit/kube/kube-cluster.ts';
import { openCloud, type Cloud } from './routegc-fixture.ts';
import { roundReads } from '../../src/controllers/managed-cluster/round-reads.ts';
import { clusterConditionWriter } from '../../src/controllers/managed-cluster/cluster-status.ts';
import { waitFor } from '../../testkit/wait-for.ts';

const missing = kubeApiserverMissing();
const NS = 'tenant-a';

describe('routegc and flight reconcilers for ManagedClusters (real kube-apiserver, emulator)', { skip: missing }, () => {
  const mgmt = useKubeCluster({ namespace: NS });

  /**
   * One cluster on the real apiserver: node-a on the emulator's server "a" (the only Node), the
   * router's routes set to node-a's pod CIDR and `routes`, the two Secrets and the ManagedCluster.
   */
  async function clusterOnNodeA(c: Cloud, name: string, o: { routes: { destination: string; nexthop: string }[]; finalizers?: string[] }) {
    const s1 = await c.server('a');
    for (const n of (await mgmt.api.nodes.list()).items) await mgmt.api.nodes.delete(undefined, n.metadata.name);
    const node = await mgmt.api.nodes.create({
      metadata: { name: 'node-a' },
      spec: { podCIDR: '100.100.1.0/24', providerID: `openstack:///${s1.id}` },
    } as Node);
    await mgmt.api.nodes.replaceStatus({ ...node, status: { addresses: [{ type: 'InternalIP', address: s1.ip }] } });
    await c.os.neutron.updateRoutes(c.routerId, [{ destination: '100.100.1.0/24', nexthop: s1.ip }, ...o.routes]);
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    await mgmt.api.secrets.create({ metadata: { name: `${name}-kubeconfig`, namespace: NS }, data: { kubeconfig: b64(mgmt.kubeconfigText) } });
    await mgmt.api.secrets.create({ metadata: { name: `${name}-cloud`, namespace: NS }, data: { 'clouds.yaml': b64(c.emu.cloudsYaml('emu')) } });
    const clusters = mgmt.api.resource<ManagedCluster>(KINDS.managedCluster);
    const mc = await clusters.create({
      metadata: { name, namespace: NS, ...(o.finalizers ? { finalizers: o.finalizers } : {}) },
      spec: {
        kubeconfigSecretRef: { name: `${name}-kubeconfig` },
        cloudCredentialsSecretRef: { name: `${name}-cloud`, cloud: 'emu' },
        clusterCIDR: '100.100.0.0/16',
        openstack: { routerID: c.routerId, securityGroupName: 'default' },
        nodePools: [{ name: 'small' }],
      },
    });
    return { s1, mc, clusters };
  }

  test('a Running cluster is collected and repaired; its deletion removes all its routes; events land on the ManagedCluster', async (t) => {
    const c = await openCloud(t);
    const { s1, mc, clusters } = await clusterOnNodeA(c, 'k1', {
      routes: [
        { destination: '100.100.2.0/24', nexthop: '10.0.0.99' },
        { destination: '10.200.0.0/16', nexthop: '10.0.0.99' },
      ],
      finalizers: ['test.kubeward.io/keep'],
    });
    const log = createSilentLogger();
    const events = new EventRecorder({ events: mgmt.api.events, component: 'kubeward-operator', clock: systemClock, log });
    const clients = secretClusterClients({ secrets: mgmt.api.secrets, log, clock: systemClock });
    const registry = new Registry();
    const gc = routeGcReconciler({
      clusters,
      clients,
      events,
      metrics: createRouteGcMetrics(registry),
      clock: systemClock,
      log,
      intervalMs: 300_000,
      random: () => 0,
      cleanupPollMs: 100,
    });
    const fl = flightReconciler({
      clusters,
      clients,
      events,
      metrics: createFlightMetrics(registry),
      clock: systemClock,
      log,
      intervalMs: 300_000,
      random: () => 0,
    });
    const signal = new AbortController().signal;
    const key = `${NS}/k1`;

    c.emu.requests = [];
    assert.deepEqual(await gc(key, signal), { requeueAfterMs: 300_000 }, 'R4: no phase yet: skipped, looked at again later');
    assert.deepEqual(await fl(key, signal), { requeueAfterMs: 300_000 }, 'F8: skipped too');
    assert.equal(c.emu.requests.length, 0, 'zero OpenStack calls while not Running');

    await clusters.replaceStatus({ ...(await clusters.get(NS, 'k1')), status: { phase: 'Running' } });
    await gc(key, signal);
    await gc(key, signal);
    assert.deepEqual(await c.routes(), ['10.200.0.0/16>10.0.0.99', `100.100.1.0/24>${s1.ip}`]);
    const flight = await fl(key, signal);
    assert.deepEqual(flight, { requeueAfterMs: 300_000 });
    assert.equal((await c.os.nova.getServer(s1.id))!.metadata['kubeward:node'], 'node-a', 'flight marked the registered instance');
    const onMc = (await mgmt.api.events.list(NS)).items
      .filter((e) => e.involvedObject.name === 'k1' && e.involvedObject.uid === mc.metadata.uid)
      .map((e) => e.reason);
    assert.ok(onMc.includes('RemovedOrphanedRoute'), onMc.join(','));
    assert.ok(onMc.includes('FlightRepaired'), onMc.join(','));

    // Deleted with the default deletionPolicy (Orphan) and held by another finalizer: the object
    // lingers, the cluster behind it may live on, and its routes are not routegc's to remove.
    await clusters.delete(NS, 'k1');
    c.emu.requests = [];
    assert.deepEqual(await gc(key, signal), {}, 'Orphan: skipped, not looked at again');
    assert.equal(c.emu.requests.length, 0, 'not even a router read');
    assert.deepEqual(await c.routes(), ['10.200.0.0/16>10.0.0.99', `100.100.1.0/24>${s1.ip}`], 'an Orphan cluster keeps its live routes');
    const skipped = (await mgmt.api.events.list(NS)).items.find((e) => e.involvedObject.uid === mc.metadata.uid && e.reason === 'RouteGCTerminationSkipped');
    assert.match(skipped?.message ?? '', /deletionPolicy is Orphan and the cluster is not Terminating/);
    assert.match(await registry.metrics(), /kubeward_routegc_refused_cycles_total\{cluster="tenant-a\/k1",reason="DeletionPolicyOrphan"\} 1/);

    // The same rule deorbit follows: once the spec asks for a clean-up, termination removes the routes.
    await clusters.patch(NS, 'k1', { spec: { deletionPolicy: 'Delete' } });
    assert.deepEqual(await gc(key, signal), {}, 'deleting: routes removed in one pass, nothing left');
    assert.deepEqual(await c.routes(), ['10.200.0.0/16>10.0.0.99'], 'termination removes every route in the cluster CIDR, and only those');
    assert.deepEqual(await fl(key, signal), {}, 'flight leaves a cluster being deleted alone');
    await clusters.patch(NS, 'k1', { metadata: { finalizers: null } });
  });

  test('side by side as the operator runs them: one router, servers and Node read, and one status write with both first conditions', async (t) => {
    const c = await openCloud(t);
    const { mc, clusters: real } = await clusterOnNodeA(c, 'k2', { routes: [] });
    await real.replaceStatus({ ...mc, status: { phase: 'Running' } });
    let puts = 0;
    // The real client, counting its status writes (its methods bound: it keeps private fields).
    const clusters = new Proxy(real, {
      get: (target, prop) => {
        if (prop === 'replaceStatus') return (obj: ManagedCluster, call?: object) => (puts++, target.replaceStatus(obj, call));
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const log = createSilentLogger();
    const events = new EventRecorder({ events: mgmt.api.events, component: 'kubeward-operator', clock: systemClock, log });
    const clients = secretClusterClients({ secrets: mgmt.api.secrets, log, clock: systemClock });
    const registry = new Registry();
    // As operator-controllers.ts builds them when both run.
    const reads = roundReads({ clock: systemClock });
    const conditionWriter = clusterConditionWriter({ clusters, clock: systemClock, log, gather: { writers: 2, gatherMs: 3000 } });
    const common = { clusters, clients, events, clock: systemClock, log, intervalMs: 300_000, random: () => 0, reads, conditionWriter };
    const gc = routeGcReconciler({ ...common, metrics: createRouteGcMetrics(registry) });
    const fl = flightReconciler({ ...common, metrics: createFlightMetrics(registry) });
    const signal = new AbortController().signal;
    // The Secrets are read and the Keystone token made before counting: this test counts the cycle's reads.
    await clients(await real.get(NS, 'k2'));
    c.emu.requests = [];
    await Promise.all([gc(`${NS}/k2`, signal), fl(`${NS}/k2`, signal)]);
    const kinds = c.emu.requests.map((r) => `${r.method} ${r.path.split('?')[0]!.replace(/[0-9a-f-]{32,36}/g, '{id}')}`);
    assert.equal(kinds.filter((k) => k.endsWith('/servers/detail')).length, 1, kinds.join(', '));
    assert.equal(kinds.filter((k) => k === 'GET /v2.0/routers/{id}' || k.endsWith('/routers/{id}')).length, 1, kinds.join(', '));
    const conditions = await waitFor(
      async () => {
        const types = (await real.get(NS, 'k2')).status?.conditions?.map((x) => x.type) ?? [];
        return types.includes('FlightHealthy') && types.includes('RouteGCHealthy') ? types : undefined;
      },
      { timeoutMs: 10_000 },
    );
    assert.deepEqual([...conditions].sort(), ['FlightHealthy', 'RouteGCHealthy', 'RouteLimitApproaching']);
    assert.equal(puts, 1, 'one status write for both first conditions');
    await real.delete(NS, 'k2');
  });
});
