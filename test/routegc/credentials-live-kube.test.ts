// Credentials are live in the operator's routegc and flight (real kube-apiserver, emulator): a
// rotated credentials Secret is used from the next run; the clients built from the old one are
// closed; a new credential that fails is reported in the ManagedCluster's conditions, never quietly
// replaced by the old one; a changed cloudCredentialsSecretRef counts as a change too.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '../../src/admin/metrics.ts';
import { systemClock } from '../../src/base/clock.ts';
import { createSilentLogger } from '../../src/base/logger.ts';
import { EventRecorder } from '../../src/clients/kube/event-recorder.ts';
import type { Node } from '../../src/clients/kube/kube-types.ts';
import { KINDS } from '../../src/clients/kube/resource-kinds.ts';
import { FLIGHT_CONDITION } from '../../src/controllers/flight/flight-conditions.ts';
import { createFlightMetrics } from '../../src/controllers/flight/flight-metrics.ts';
import { flightReconciler } from '../../src/controllers/flight/flight-reconciler.ts';
import { secretClusterClients } from '../../src/controllers/managed-cluster/cluster-clients.ts';
import type { ManagedCluster } from '../../src/controllers/managed-cluster/managed-cluster.ts';
import { ROUTEGC_CONDITION } from '../../src/controllers/routegc/routegc-conditions.ts';
import { createRouteGcMetrics } from '../../src/controllers/routegc/routegc-metrics.ts';
import { routeGcReconciler } from '../../src/controllers/routegc/routegc-reconciler.ts';
import { kubeApiserverMissing } from '../../testkit/kube/kube-test-server.ts';
import { useKubeCluster } from '../../testkit/kube/kube-cluster.ts';
import { openCloud } from './routegc-fixture.ts';

const missing = kubeApiserverMissing();
const NS = 'credentials-live';
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('rotated credentials are used from the next run of routegc and flight (real kube-apiserver, emulator)', { skip: missing }, () => {
  const mgmt = useKubeCluster({ namespace: NS });

  test('a rotated Secret that fails is reported, the old clients are closed, and a changed SecretRef is used', async (t) => {
    const c = await openCloud(t);
    const a = await c.server('a');
    for (const n of (await mgmt.api.nodes.list()).items) await mgmt.api.nodes.delete(undefined, n.metadata.name);
    const node = await mgmt.api.nodes.create({ metadata: { name: 'node-a' }, spec: { podCIDR: '100.100.1.0/24', providerID: `openstack:///${a.id}` } } as Node);
    await mgmt.api.nodes.replaceStatus({ ...node, status: { addresses: [{ type: 'InternalIP', address: a.ip }] } });
    await c.os.neutron.updateRoutes(c.routerId, [{ destination: '100.100.1.0/24', nexthop: a.ip }]);
    const good = c.emu.cloudsYaml('emu');
    await mgmt.api.secrets.create({ metadata: { name: 'k-kubeconfig', namespace: NS }, data: { kubeconfig: b64(mgmt.kubeconfigText) } });
    await mgmt.api.secrets.create({ metadata: { name: 'k-cloud', namespace: NS }, data: { 'clouds.yaml': b64(good) } });
    const clusters = mgmt.api.resource<ManagedCluster>(KINDS.managedCluster);
    const mc = await clusters.create({
      metadata: { name: 'k', namespace: NS },
      spec: {
        kubeconfigSecretRef: { name: 'k-kubeconfig' },
        cloudCredentialsSecretRef: { name: 'k-cloud', cloud: 'emu' },
        clusterCIDR: '100.100.0.0/16',
        openstack: { routerID: c.routerId, securityGroupName: 'default' },
      },
    });
    await clusters.replaceStatus({ ...mc, status: { phase: 'Running' } });
    const log = createSilentLogger();
    const clients = secretClusterClients({ secrets: mgmt.api.secrets, log, clock: systemClock });
    const common = {
      clusters,
      clients,
      events: new EventRecorder({ events: mgmt.api.events, component: 'kubeward-operator', clock: systemClock, log }),
      clock: systemClock,
      log,
      intervalMs: 300_000,
      random: () => 0,
    };
    const gc = routeGcReconciler({ ...common, metrics: createRouteGcMetrics(new Registry()) });
    const fl = flightReconciler({ ...common, metrics: createFlightMetrics(new Registry()) });
    const signal = new AbortController().signal;
    const key = `${NS}/k`;
    const condition = async (type: string) => (await clusters.get(NS, 'k')).status?.conditions?.find((x) => x.type === type);

    await gc(key, signal);
    await fl(key, signal);
    assert.equal((await condition(ROUTEGC_CONDITION))?.status, 'True');
    const old = await clients(await clusters.get(NS, 'k'));

    // Rotated to a password Keystone refuses: the next run of each controller uses it, and fails.
    const bad = good.replace('password: admin', 'password: rotated-wrong');
    const secret = await mgmt.api.secrets.get(NS, 'k-cloud');
    await mgmt.api.secrets.replace({ ...secret, data: { 'clouds.yaml': b64(bad) } });
    c.emu.requests = [];
    await assert.rejects(gc(key, signal), /401|[Aa]uthenticat/);
    await assert.rejects(fl(key, signal), /401|[Aa]uthenticat/);
    const gcCondition = await condition(ROUTEGC_CONDITION);
    assert.equal(gcCondition?.status, 'False');
    assert.equal(gcCondition?.reason, 'CycleFailed');
    assert.equal((await condition(FLIGHT_CONDITION))?.status, 'False');
    assert.ok(
      c.emu.requests.some((x) => x.path.endsWith('/auth/tokens') && x.status === 401),
      'the new credential was tried',
    );
    assert.ok(!c.emu.requests.some((x) => x.path.includes('/routers/') && x.status === 200), 'and the old one was not used instead');
    await assert.rejects(old.openstack.neutron.getRouter(c.routerId), /closed/, 'the clients of the old credential are closed');

    // A changed SecretRef to a working Secret: used from the next run.
    await mgmt.api.secrets.create({ metadata: { name: 'k-cloud-2', namespace: NS }, data: { 'clouds.yaml': b64(good) } });
    await clusters.patch(NS, 'k', { spec: { cloudCredentialsSecretRef: { name: 'k-cloud-2', cloud: 'emu' } } });
    await gc(key, signal);
    await fl(key, signal);
    assert.equal((await condition(ROUTEGC_CONDITION))?.status, 'True');
    assert.equal((await condition(FLIGHT_CONDITION))?.status, 'True');
  });
});
