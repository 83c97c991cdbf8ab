// Black-box process tests of `kubeward flight --once` (and --dry-run) on the OpenStack emulator and a
// real kube-apiserver: the emulator's request log shows that a refused round and a dry run send no
// reboot, deletion, tag, metadata or rule, and that the real run sends exactly what the dry run listed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { kubeApiserverMissing } from '../../testkit/kube/kube-test-server.ts';
import type { RequestLogEntry } from '../../testkit/openstack/openstack-emulator.ts';
import { openCliCloud, type CliCloud } from '../routegc/cli-cloud-fixture.ts';
import { setNodes } from '../routegc/kube-cluster-fixture.ts';
import { kubernikusClaim } from '../../src/controllers/managed-cluster/provisioner-claims.ts';

const missing = kubeApiserverMissing();
/** What Kubernikus writes on cluster k1's servers: flight's proof for those without a Node. */
const K1 = kubernikusClaim('k1').metadata;

/** Reboots, deletions, tags, metadata, group assignments and rules: what flight must never send on doubt. */
const destructive = (r: RequestLogEntry) =>
  (r.service === 'compute' && (r.method === 'DELETE' || r.path.includes('/action') || r.path.includes('/tags/') || r.path.includes('/metadata'))) ||
  (r.service === 'network' && r.path.includes('/security-group-rules') && r.method !== 'GET');

describe('kubeward flight --once as a process', { skip: missing }, () => {
  let c: CliCloud;
  before(async () => {
    c = await openCliCloud();
    await c.fx.call('network', { method: 'POST', path: '/security-groups', body: { security_group: { name: 'k1-sg' } } });
  });
  after(async () => {
    await c?.close();
  });
  const base = [
    '--cluster-name',
    'k1',
    '--cluster-cidr',
    '100.100.0.0/16',
    '--security-group',
    'k1-sg',
    '--pool',
    'small',
    '--once',
    '--no-check-roles',
    '--soft-reboot-after',
    '0s',
  ];

  test('bad scope is bad usage: a /0 or too wide --cluster-cidr, a pool name with "-" (exit 2, one line, nothing sent)', async () => {
    c.emu.requests = [];
    for (const [extra, want] of [
      [['--cluster-cidr', '0.0.0.0/0'], /whole address space/],
      [['--cluster-cidr', '::/0', '--allow-wide-cluster-cidr'], /whole address space/],
      [['--pool', 'small-x'], /collide/],
      [['--cluster-uid', 'a,b'], /metadata\.uid/],
      [['--owner-metadata', 'noequals'], /key=value/],
      [['--owner-metadata', 'kubeward:owner=x'], /kubeward's own key/],
      [['--adopt-owner', 'a,b'], /earlier owner id/],
    ] as const) {
      const r = await c.run('flight', [...base, ...extra]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, want);
    }
    assert.deepEqual(c.writes(), []);
  });

  test('harm 1: with an empty Node list the round is refused (exit 1, the reason printed) and nothing destructive is sent, dry run or not', async () => {
    await setNodes(c.api, []);
    const a = await c.server('kks-k1-small-aaaaa', K1);
    await c.server('kks-k1-small-bbbbb', K1);
    c.emu.store.servers.get(a.id)!.vm_state = 'error';
    c.emu.requests = [];
    for (const dry of [['--dry-run'], []]) {
      const r = await c.run('flight', [...base, ...dry]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stdout, /refused \(NodeListEmpty\)/);
    }
    assert.deepEqual(c.emu.requests.filter(destructive), []);
    c.emu.store.servers.get(a.id)!.vm_state = 'active';
  });

  test('--dry-run lists what it would do and sends none of it; the real run does exactly that, and never to a server proven by nothing', async () => {
    const anchor = await c.server('kks-k1-small-ccccc', K1);
    const foreign = await c.server('worker-x');
    // Nodes for every proven server but one, and a Node named like the foreign server (no providerID).
    const ids = [...c.emu.store.servers.values()].filter((s) => /^kks-k1-small-(aaaaa|ccccc)$/.test(s.name));
    await setNodes(c.api, [...ids.map((s) => ({ name: `n-${s.name}`, ip: '10.0.0.250', instanceId: s.id })), { name: 'worker-x', ip: foreign.ip }]);
    c.emu.requests = [];
    const dry = await c.run('flight', [...base, '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.deepEqual(c.emu.requests.filter(destructive), [], 'a dry run sends nothing destructive');
    const would = dry.stdout
      .split('\n')
      .filter((l) => l.startsWith('would '))
      .map((l) => l.slice('would '.length))
      .sort();
    assert.ok(
      would.some((l) => /soft-reboot instance kks-k1-small-bbbbb/.test(l)),
      dry.stdout,
    );
    assert.ok(!would.some((l) => l.includes('worker-x')), 'the foreign server is not in the plan');
    const real = await c.run('flight', base);
    assert.equal(real.code, 0, real.stderr);
    const done = real.stdout
      .split('\n')
      .filter((l) => l.startsWith('done: '))
      .map((l) => l.slice('done: '.length))
      .sort();
    assert.deepEqual(done, would, 'the same decision');
    const touched = c.emu.requests.filter(destructive).map((r) => r.path);
    assert.ok(!touched.some((p) => p.includes(foreign.id)), 'nothing sent for the foreign server');
    assert.ok(
      touched.some((p) => p.includes(anchor.id)),
      'the proven server got its repairs',
    );
    const kubeSystem = (await c.api.namespaces.get(undefined, 'kube-system')).metadata.uid;
    assert.equal(
      (await c.os.nova.getServer(anchor.id))!.metadata['kubeward:owner'],
      kubeSystem,
      "without --cluster-uid the owner id is the cluster's kube-system UID, never the cluster's name",
    );
  });

  test('servers stamped by another owner id hold the round (OwnerChanged, exit 1, nothing sent) until --adopt-owner takes them over', async () => {
    const adopted = await c.server('kks-k1-small-dpt2z');
    await c.os.nova.mergeMetadata(adopted.id, { 'kubeward:owner': 'old-id', 'kubeward:cluster': 'k1' });
    const registered = [...c.emu.store.servers.values()].filter((s) => /^kks-k1-small-(aaaaa|ccccc|dpt2z)$/.test(s.name));
    const ipOf = async (id: string) => Object.values((await c.os.nova.getServer(id))!.addresses).flat()[0]!.addr;
    await setNodes(c.api, await Promise.all(registered.map(async (s) => ({ name: `n-${s.name}`, ip: await ipOf(s.id), instanceId: s.id }))));
    c.emu.requests = [];
    const held = await c.run('flight', base);
    assert.equal(held.code, 1, held.stderr);
    assert.match(held.stdout, /refused \(OwnerChanged\): 1 server\(s\) carry owner id old-id/);
    assert.match(held.stdout, /--adopt-owner old-id/);
    assert.deepEqual(c.emu.requests.filter(destructive), []);
    const adopt = await c.run('flight', [...base, '--adopt-owner', 'old-id']);
    assert.equal(adopt.code, 0, adopt.stderr + adopt.stdout);
    const kubeSystem = (await c.api.namespaces.get(undefined, 'kube-system')).metadata.uid;
    assert.equal((await c.os.nova.getServer(adopted.id))!.metadata['kubeward:owner'], kubeSystem, 're-stamped under the new owner id');
  });
});
