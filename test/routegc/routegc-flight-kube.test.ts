// kubeward routegc and flight as processes against a real kube-apiserver (the cluster's Nodes, their
// conditions and events) and the OpenStack emulator (clouds.yaml on disk): R1, R5, R7 and dry run
// through --once, flight's missing-route condition, Node event and route repair.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKubeApi, type KubeApi } from '../../src/clients/kube/kube-api.ts';
import type { Node } from '../../src/clients/kube/kube-types.ts';
import { loadKubeConfig } from '../../src/clients/kube/load-kube-config.ts';
import { kubeApiserverMissing, startKubeApiserver, type KubeTestServer } from '../../testkit/kube/kube-test-server.ts';
import { KubewardProcess, envWithoutOpenStack } from '../../testkit/kubeward-process.ts';
import { openCloud, type Cloud } from './routegc-fixture.ts';

const missing = kubeApiserverMissing();

describe('routegc and flight against a real kube-apiserver and the OpenStack emulator', { skip: missing }, () => {
  let kube: KubeTestServer;
  let api: KubeApi;
  let dir: string;

  before(async () => {
    kube = await startKubeApiserver();
    api = createKubeApi(loadKubeConfig({ kind: 'file', path: kube.kubeconfigPath }));
    dir = await mkdtemp(join(tmpdir(), 'kw-routegc-'));
  });
  after(async () => {
    await kube?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function setNodes(nodes: { name: string; ip: string; podCIDR?: string; instanceId?: string }[]): Promise<void> {
    for (const n of (await api.nodes.list()).items) await api.nodes.delete(undefined, n.metadata.name);
    for (const n of nodes) {
      const created = await api.nodes.create({
        metadata: { name: n.name },
        spec: { podCIDR: n.podCIDR, podCIDRs: n.podCIDR ? [n.podCIDR] : undefined, providerID: n.instanceId ? `openstack:///${n.instanceId}` : undefined },
      } as Node);
      await api.nodes.replaceStatus({
        ...created,
        status: {
          addresses: [
            { type: 'InternalIP', address: n.ip },
            { type: 'Hostname', address: n.name },
          ],
        },
      });
    }
  }

  async function kubeward(c: Cloud, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const clouds = join(dir, `clouds-${c.emu.port}.yaml`);
    await writeFile(clouds, c.emu.cloudsYaml('emu'));
    const p = new KubewardProcess([...args, '--kubeconfig', kube.kubeconfigPath, '--os-cloud', 'emu', '--log-level', 'warn'], {
      env: envWithoutOpenStack({ OS_CLIENT_CONFIG_FILE: clouds }),
    });
    const timer = setTimeout(() => p.child.kill('SIGKILL'), 30_000);
    const { code } = await p.exited;
    clearTimeout(timer);
    return { code, stdout: p.stdout, stderr: p.stderr };
  }

  async function r1(c: Cloud) {
    const s1 = await c.server('a');
    const s2 = await c.server('b');
    await setNodes([
      { name: 'node-a', ip: s1.ip, podCIDR: '100.100.1.0/24', instanceId: s1.id },
      { name: 'node-b', ip: s2.ip, podCIDR: '100.100.4.0/24', instanceId: s2.id },
    ]);
    await c.os.neutron.updateRoutes(c.routerId, [
      { destination: '100.100.1.0/24', nexthop: s1.ip },
      { destination: '100.100.2.0/24', nexthop: '10.0.0.99' },
      { destination: '100.100.4.0/24', nexthop: s1.ip },
      { destination: '100.100.4.0/24', nexthop: s2.ip },
      { destination: '10.200.0.0/16', nexthop: '10.0.0.99' },
    ]);
    return { s1, s2 };
  }

  // --confirm-after 10s is the least accepted (harm 4, docs/test-catalogue.md).
  const gcArgs = (c: Cloud) => ['routegc', '--router', c.routerId, '--cluster-cidr', '100.100.0.0/16', '--once', '--confirm-after', '10s'];

  test('R1 and R5 with real Nodes: --once removes the orphan and the losing duplicate, keeps the rest, exits 0', async (t) => {
    const c = await openCloud(t);
    const { s1, s2 } = await r1(c);
    const run = await kubeward(c, gcArgs(c));
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /look 2: .*removed: 100\.100\.2\.0\/24 via 10\.0\.0\.99 \(orphaned\), 100\.100\.4\.0\/24 via .* \(duplicate\)/);
    assert.deepEqual(await c.routes(), [`10.200.0.0/16>10.0.0.99`, `100.100.1.0/24>${s1.ip}`, `100.100.4.0/24>${s2.ip}`].sort());
  });

  test('dry run with real Nodes: says what it would remove and writes nothing', async (t) => {
    const c = await openCloud(t);
    await r1(c);
    c.emu.requests = [];
    const run = await kubeward(c, [...gcArgs(c), '--dry-run']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /would remove: 100\.100\.2\.0\/24/);
    assert.equal(c.emu.requests.filter((r) => r.method !== 'GET' && !r.path.includes('/auth/tokens')).length, 0);
    assert.equal((await c.routes()).length, 5);
  });

  test('R7 with real Nodes: an empty server list refuses, exits 1 and removes nothing', async (t) => {
    const c = await openCloud(t);
    await setNodes([{ name: 'node-a', ip: '10.0.0.11', podCIDR: '100.100.1.0/24' }]);
    await c.os.neutron.updateRoutes(c.routerId, [{ destination: '100.100.2.0/24', nexthop: '10.0.0.99' }]);
    const run = await kubeward(c, gcArgs(c));
    assert.equal(run.code, 1);
    assert.match(run.stdout, /refused \(InstanceListEmpty\): the instance list is empty while 1 Node\(s\) exist/);
    assert.equal((await c.routes()).length, 1);
  });

  test('flight: a Node without its route gets kubeward.io/RouteMissing and an event; --repair-missing-routes adds it', async (t) => {
    const c = await openCloud(t);
    const s1 = await c.server('a');
    await setNodes([{ name: 'node-a', ip: s1.ip, podCIDR: '100.100.1.0/24', instanceId: s1.id }]);
    const args = [
      'flight',
      '--cluster-name',
      'k1',
      '--cluster-cidr',
      '100.100.0.0/16',
      '--security-group',
      'default',
      '--router',
      c.routerId,
      '--once',
      '--no-check-roles',
    ];
    const detect = await kubeward(c, args);
    assert.equal(detect.code, 0, detect.stderr + detect.stdout);
    const node = await api.nodes.get(undefined, 'node-a');
    const cond = node.status?.conditions?.find((x) => x.type === 'kubeward.io/RouteMissing');
    assert.equal(cond?.status, 'True');
    assert.equal(cond?.reason, 'RouteMissing');
    const events = (await api.events.list()).items.filter((e) => e.involvedObject.kind === 'Node' && e.involvedObject.name === 'node-a');
    assert.ok(
      events.some((e) => e.reason === 'RouteMissing' && e.type === 'Warning'),
      JSON.stringify(events.map((e) => e.reason)),
    );
    const repair = await kubeward(c, [...args, '--repair-missing-routes']);
    assert.equal(repair.code, 0, repair.stderr + repair.stdout);
    assert.deepEqual(await c.routes(), [`100.100.1.0/24>${s1.ip}`]);
    const again = await kubeward(c, args);
    assert.equal(again.code, 0);
    const fixed = (await api.nodes.get(undefined, 'node-a')).status?.conditions?.find((x) => x.type === 'kubeward.io/RouteMissing');
    assert.equal(fixed?.status, 'False', 'the condition clears once the route is there');
  });
});
