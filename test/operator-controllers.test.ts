// kubeward operator running deorbit, routegc and flight together as one process, with leader
// election on, against a real kube-apiserver (management cluster and the cluster's own API in one)
// and the OpenStack emulator: routegc removes an orphaned route of a Running cluster, flight repairs
// a missing security group, the settings of both come from operator flags and the config file, and
// a deleted cluster's deorbit completes only once every route of its CIDR is gone, and a deleted
// Orphan cluster that another finalizer holds keeps its routes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type KubeApi } from '../src/clients/kube/kube-api.ts';
import type { Node } from '../src/clients/kube/kube-types.ts';
import { KINDS } from '../src/clients/kube/resource-kinds.ts';
import type { ManagedCluster } from '../src/controllers/managed-cluster/managed-cluster.ts';
import { kubeApiserverMissing, type KubeTestServer } from '../testkit/kube/kube-test-server.ts';
import { startKubeCluster } from '../testkit/kube/kube-cluster.ts';
import { KubewardProcess, runKubeward } from '../testkit/kubeward-process.ts';
import { waitFor } from '../testkit/wait-for.ts';
import { openCloud, type Cloud } from './routegc/routegc-fixture.ts';
import { adminTokenFixture } from '../testkit/admin-token.ts';

/** /status and drain need the admin token. */
const ADMIN_TOKEN = adminTokenFixture();

const missing = kubeApiserverMissing();
const NS = 'tenant-op';

test('operator flags of routegc and flight are config keys too, and a bad value names the key', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-opcfg-'));
  try {
    await writeFile(join(dir, 'op.yaml'), 'kubeconfig: /nonexistent\nrouteLimit: 30\nflightSoftRebootAfter: soon\n');
    const bad = await runKubeward(['operator', '--config', join(dir, 'op.yaml'), '--admin-address', 'off']);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /flightSoftRebootAfter/);
    const flag = await runKubeward(['operator', '--kubeconfig', '/nonexistent', '--routegc-interval', 'often', '--admin-address', 'off']);
    assert.equal(flag.code, 2, flag.stderr);
    assert.match(flag.stderr, /--routegc-interval/);
    // Two sightings of a route one instant apart would make the confirmation meaningless (harm 4, docs/test-catalogue.md).
    const instant = await runKubeward(['operator', '--kubeconfig', '/nonexistent', '--routegc-confirm-after', '0s', '--admin-address', 'off']);
    assert.equal(instant.code, 2, instant.stderr);
    assert.match(instant.stderr, /--routegc-confirm-after: 0s is too short; the least accepted is 10s/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

describe('kubeward operator --controllers deorbit,routegc,flight (real kube-apiserver, emulator)', { skip: missing }, () => {
  let kube: KubeTestServer;
  let api: KubeApi;
  let kubeconfigText: string;
  let dir: string;
  const procs: KubewardProcess[] = [];

  before(async () => {
    ({ kube, api, kubeconfigText } = await startKubeCluster({ namespace: NS }));
    dir = await mkdtemp(join(tmpdir(), 'kw-opctl-'));
  });
  after(async () => {
    for (const p of procs) await p.stop();
    await kube?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const clusters = () => api.resource<ManagedCluster>(KINDS.managedCluster);

  /** A Running ManagedCluster k1 on the emulator's router, one Node on server "a", and its Secrets. */
  async function runningCluster(c: Cloud, name: string, deletionPolicy: 'Delete' | 'Orphan' = 'Delete'): Promise<{ ip: string; id: string; sgId: string }> {
    const s1 = await c.server('a');
    for (const n of (await api.nodes.list()).items) await api.nodes.delete(undefined, n.metadata.name);
    const node = await api.nodes.create({ metadata: { name: 'node-a' }, spec: { podCIDR: '100.100.1.0/24', providerID: `openstack:///${s1.id}` } } as Node);
    await api.nodes.replaceStatus({ ...node, status: { addresses: [{ type: 'InternalIP', address: s1.ip }] } });
    const sg = await c.fx.call<{ security_group: { id: string } }>('network', {
      method: 'POST',
      path: '/security-groups',
      body: { security_group: { name: `${name}-sg` } },
    });
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    await api.secrets.create({ metadata: { name: `${name}-kubeconfig`, namespace: NS }, data: { kubeconfig: b64(kubeconfigText) } });
    await api.secrets.create({ metadata: { name: `${name}-cloud`, namespace: NS }, data: { 'clouds.yaml': b64(c.emu.cloudsYaml('emu')) } });
    const mc = await clusters().create({
      metadata: { name, namespace: NS, finalizers: ['test.kubeward.io/keep'] },
      spec: {
        kubeconfigSecretRef: { name: `${name}-kubeconfig` },
        cloudCredentialsSecretRef: { name: `${name}-cloud`, cloud: 'emu' },
        clusterCIDR: '100.100.0.0/16',
        openstack: { routerID: c.routerId, securityGroupName: `${name}-sg`, loadBalancerClusterName: name },
        nodePools: [{ name: 'small' }],
        deletionPolicy, // Delete unless a test says otherwise: deorbited when deleted (Orphan lets them go)
      },
    });
    await clusters().replaceStatus({ ...mc, status: { phase: 'Running' } });
    return { ...s1, sgId: sg.security_group.id };
  }

  async function operator(extra: string[] = []): Promise<{ proc: KubewardProcess; admin: string }> {
    const proc = new KubewardProcess([
      'operator',
      '--kubeconfig',
      kube.kubeconfigPath,
      '--controllers',
      'deorbit,routegc,flight',
      '--identity',
      'replica-1',
      '--lease-namespace',
      'default',
      '--lease-duration',
      '2s',
      '--renew-deadline',
      '1500ms',
      '--retry-period',
      '200ms',
      '--routegc-interval',
      '1s',
      '--routegc-confirm-after',
      '10s',
      '--flight-interval',
      '1s',
      '--deorbit-poll-interval',
      '300ms',
      ...ADMIN_TOKEN.args,
      '--admin-address',
      '127.0.0.1:0',
      '--log-level',
      'warn',
      ...extra,
    ]);
    procs.push(proc);
    // Port 0: the operator says which port it bound, at any log level.
    const port = await proc.adminPort({ timeoutMs: 30_000 });
    return { proc, admin: `http://127.0.0.1:${port}` };
  }

  const eventReasons = async (name: string): Promise<string[]> =>
    (await api.events.list(NS)).items.filter((e) => e.involvedObject.name === name).map((e) => e.reason);
  const metric = async (admin: string, pattern: RegExp): Promise<number> => {
    const text = await (await fetch(`${admin}/metrics`)).text();
    return text
      .split('\n')
      .filter((l) => pattern.test(l))
      .reduce((s, l) => s + Number(l.split(' ').pop()), 0);
  };

  test('the leader removes the orphaned route of a Running cluster and adds its missing security group', async (t) => {
    const c = await openCloud(t);
    const s1 = await runningCluster(c, 'k1');
    await c.os.neutron.updateRoutes(c.routerId, [
      { destination: '100.100.1.0/24', nexthop: s1.ip },
      { destination: '100.100.2.0/24', nexthop: '10.0.0.99' },
      { destination: '10.200.0.0/16', nexthop: '10.0.0.99' },
    ]);
    assert.ok(!(await c.os.nova.getServer(s1.id))!.security_groups?.some((g) => g.name === 'k1-sg'), "the server starts without the cluster's group");
    const { proc, admin } = await operator();

    await waitFor(async () => (await c.routes()).length === 2, {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: `the orphaned route removed; stderr: ${proc.stderr.slice(-400)}`,
    });
    assert.deepEqual(
      await c.routes(),
      ['10.200.0.0/16>10.0.0.99', `100.100.1.0/24>${s1.ip}`],
      "only the orphan went: the Node's route and a foreign route stay",
    );
    await waitFor(async () => (await c.os.nova.getServer(s1.id))!.security_groups?.some((g) => g.name === 'k1-sg'), {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: 'flight added k1-sg to the server',
    });
    const group = await c.os.neutron.getSecurityGroup(s1.sgId);
    assert.deepEqual(
      group!.security_group_rules
        .filter((r) => r.remote_ip_prefix === '100.100.0.0/16')
        .map((r) => r.protocol)
        .sort(),
      ['icmp', 'tcp', 'udp'],
      'pod-CIDR rules created',
    );

    await waitFor(
      async () => {
        const reasons = await eventReasons('k1');
        return reasons.includes('RemovedOrphanedRoute') && reasons.includes('FlightRepaired');
      },
      { timeoutMs: 15_000, intervalMs: 200, what: 'events on the ManagedCluster' },
    );
    const status = (await (await fetch(`${admin}/status`, { headers: ADMIN_TOKEN.headers })).json()) as {
      leader: boolean;
      controllers: { name: string; running: boolean }[];
    };
    assert.equal(status.leader, true);
    assert.deepEqual(
      status.controllers.map((x) => [x.name, x.running]),
      [
        ['deorbit', true],
        ['routegc', true],
        ['flight', true],
      ],
    );
    assert.ok((await metric(admin, /^kubeward_routegc_routes_removed_total\{.*reason="orphaned"/)) >= 1, "routegc metric on the operator's registry");
    assert.ok(
      (await metric(admin, /^kubeward_flight_repairs_total\{.*action="add-security-group".*result="done"/)) >= 1,
      "flight metric on the operator's registry",
    );
    assert.ok((await metric(admin, /^kubeward_controller_reconciles_total\{controller="routegc"/)) >= 2, 'routegc reconciles counted');
    assert.equal((await clusters().get(NS, 'k1')).metadata.finalizers?.includes('kubeward.io/deorbit'), true, 'deorbit added its finalizer meanwhile');
    await proc.stop();
    // Its cloud goes with this test: the next operator must not find it.
    await clusters().patch(NS, 'k1', { metadata: { finalizers: null } });
    await clusters().delete(NS, 'k1');
  });

  test('termination: deorbit finishes only after every route of the cluster CIDR is gone, and waits while Neutron refuses', async (t) => {
    const c = await openCloud(t);
    const s1 = await runningCluster(c, 'k2');
    await c.os.neutron.updateRoutes(c.routerId, [
      { destination: '100.100.1.0/24', nexthop: s1.ip },
      { destination: '10.200.0.0/16', nexthop: '10.0.0.99' },
    ]);
    const { proc } = await operator();
    const deorbitFinalizer = async () => (await clusters().get(NS, 'k2')).metadata.finalizers?.includes('kubeward.io/deorbit') ?? false;
    await waitFor(deorbitFinalizer, { timeoutMs: 30_000, intervalMs: 200, what: "deorbit's finalizer on k2" });
    const fault = c.emu.addFault({ service: 'network', method: 'PUT', path: '^/routers/', status: 503, message: 'router busy' });
    await clusters().delete(NS, 'k2');
    const waiting = await waitFor(
      async () => {
        const cond = (await clusters().get(NS, 'k2')).status?.conditions?.find((x) => x.type === 'DeorbitComplete');
        return cond?.reason === 'WaitingForRoutes' ? cond : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: `DeorbitComplete=False WaitingForRoutes; stderr: ${proc.stderr.slice(-400)}` },
    );
    assert.equal(waiting.status, 'False');
    assert.match(waiting.message, /100\.100\.1\.0\/24/);
    assert.ok(await deorbitFinalizer(), 'the finalizer stays while the route is there');
    assert.ok((await c.routes()).includes(`100.100.1.0/24>${s1.ip}`), 'the route is still there while Neutron refuses the write');
    c.emu.faults.remove(fault.id);
    await waitFor(async () => !(await deorbitFinalizer()), { timeoutMs: 30_000, intervalMs: 200, what: 'deorbit finished once Neutron answers' });
    assert.deepEqual(await c.routes(), ['10.200.0.0/16>10.0.0.99'], 'every route of the cluster CIDR went, the foreign one stayed');
    const done = (await clusters().get(NS, 'k2')).status?.conditions?.find((x) => x.type === 'DeorbitComplete');
    assert.equal(done?.status, 'True');
    const reasons = await eventReasons('k2');
    assert.ok(reasons.includes('WaitingForDeorbitRoutes') && reasons.includes('SuccessfulDeorbitRoutes'), reasons.join(','));
    await clusters().patch(NS, 'k2', { metadata: { finalizers: null } });
    await proc.stop();
  });

  test('an Orphan cluster held by another finalizer keeps its live routes once deorbit lets it go', async (t) => {
    const c = await openCloud(t);
    const s1 = await runningCluster(c, 'k3', 'Orphan');
    const initial = [`100.100.1.0/24>${s1.ip}`, '10.200.0.0/16>10.0.0.99'];
    await c.os.neutron.updateRoutes(c.routerId, [
      { destination: '100.100.1.0/24', nexthop: s1.ip },
      { destination: '10.200.0.0/16', nexthop: '10.0.0.99' },
    ]);
    const { proc, admin } = await operator();
    const finalizers = async () => (await clusters().get(NS, 'k3')).metadata.finalizers ?? [];
    await waitFor(async () => (await finalizers()).includes('kubeward.io/deorbit'), { timeoutMs: 30_000, intervalMs: 200, what: "deorbit's finalizer on k3" });
    await clusters().delete(NS, 'k3');
    await waitFor(async () => !(await finalizers()).includes('kubeward.io/deorbit'), {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: `deorbit let k3 go; stderr: ${proc.stderr.slice(-400)}`,
    });
    assert.deepEqual(await finalizers(), ['test.kubeward.io/keep'], 'the other finalizer holds the object');
    // routegc's next interval (1 s here) looks at the lingering object: it must say why it leaves the routes, not remove them.
    await waitFor(async () => (await eventReasons('k3')).includes('RouteGCTerminationSkipped') || (await c.routes()).length < 2, {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: `routegc looked at the deleted Orphan cluster; stderr: ${proc.stderr.slice(-400)}`,
    });
    assert.deepEqual((await c.routes()).sort(), initial.sort(), 'the live route of the Orphan cluster is still there');
    assert.ok((await eventReasons('k3')).includes('DeorbitSkipped'), 'deorbit said why it cleaned nothing up');
    assert.ok((await metric(admin, /^kubeward_routegc_refused_cycles_total\{.*reason="DeletionPolicyOrphan"/)) >= 1, 'the refusal is counted');
    await proc.stop();
    await clusters().patch(NS, 'k3', { metadata: { finalizers: null } });
  });
});
