// kubeward plan reads an inventory laid out as Ansible reads it: group_vars/ and host_vars/ beside
// the inventory and in the playbook directory (--playbook-dir), a directory of inventory files, the
// precedence between them, every variables file checked, and warnings for what Ansible would
// silently leave out (a host in no kubespray group, a group one edit from a kubespray group).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadInventory } from '../src/cli/plan.ts';
import { runKubeward } from '../testkit/kubeward-process.ts';

const SAMPLE = join(import.meta.dirname, 'fixtures/kubespray-sample');
let root: string;

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'kw-plan-ansible-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Writes files (path → text) under a new directory of the test's and returns it. */
async function layout(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(root, name);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

const INI = `[kube_control_plane]
cp1 ip=10.0.0.11
cp2 ip=10.0.0.12

[etcd:children]
kube_control_plane

[kube_node]
w1 ip=10.0.0.21
`;

test('group_vars/all.yml beside the inventory is read: loadbalancer_apiserver_type haproxy renders HAProxy, not nginx', async () => {
  const dir = await layout('lb-type', { 'inventory.ini': INI, 'group_vars/all.yml': 'loadbalancer_apiserver_type: haproxy\n' });
  const out = join(root, 'lb-type-out');
  const r = await runKubeward(['plan', 'render', '--inventory', join(dir, 'inventory.ini'), '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  const manifest = await readFile(join(out, 'nodes/w1/etc/kubernetes/manifests/haproxy.yml'), 'utf8');
  assert.match(manifest, /haproxy/);
  await assert.rejects(readFile(join(out, 'nodes/w1/etc/kubernetes/manifests/nginx-proxy.yml'), 'utf8'), /ENOENT/);
});

test("kubespray's sample directory read as Ansible reads it gives what its group_vars passed by --vars give", async () => {
  const ini = (await readFile(join(SAMPLE, 'inventory.ini'), 'utf8')).replace(/^# (node\d)/gm, '$1');
  const dir = await layout('sample', { 'inventory.ini': ini });
  // The sample's group_vars beside a copy of its inventory (hosts uncommented).
  const { cp } = await import('node:fs/promises');
  await cp(join(SAMPLE, 'group_vars'), join(dir, 'group_vars'), { recursive: true });
  const inv = await loadInventory(join(dir, 'inventory.ini'));
  assert.equal(inv.certDir, '/etc/kubernetes/ssl', 'k8s_cluster/k8s-cluster.yml: kube_cert_dir: "{{ kube_config_dir }}/ssl"');
  assert.equal(inv.localLbHealthcheckPort, 8081, 'all/all.yml: loadbalancer_apiserver_healthcheck_port: 8081');
});

test('a directory inventory: its files are merged in name order, with the group_vars/ and host_vars/ inside it (no EISDIR)', async () => {
  const dir = await layout('dir-inventory', {
    '01-hosts.yaml': 'all:\n  hosts:\n    cp1: {ip: 10.0.0.11}\n    w1: {ip: 10.0.0.21}\n',
    '02-groups.ini': '[kube_control_plane]\ncp1\n\n[etcd]\ncp1\n\n[kube_node]\nw1\n',
    'README.md': '# notes, skipped as Ansible skips .md\n',
    'group_vars/all/lb.yml': 'loadbalancer_apiserver_port: 8443\n',
    'host_vars/w1.yml': 'access_ip: 192.168.0.21\n',
  });
  const inv = await loadInventory(dir);
  assert.deepEqual(
    inv.hosts.map((h) => [h.name, h.controlPlane, h.worker]),
    [
      ['cp1', true, false],
      ['w1', false, true],
    ],
  );
  assert.equal(inv.localLbPort, 8443);
  assert.equal(inv.hosts.find((h) => h.name === 'w1')!.accessIp, '192.168.0.21');
  assert.match(inv.warnings.join('\n'), /02-groups\.ini: read; ansible-core before 2\.19 skips \.ini files/);
});

test("Ansible's precedence: inventory-file group vars < group_vars/all < group_vars/<group>, the playbook's over the inventory's at each level, then --vars, host vars, host_vars/", async () => {
  const dir = await layout('precedence', {
    'hosts.ini': `[all:vars]
loadbalancer_apiserver_port=7001
kube_cert_dir=/etc/a

[kube_control_plane]
cp1 ip=10.0.0.11

[etcd:children]
kube_control_plane

[kube_node]
w1 ip=10.0.0.21 access_ip=192.168.0.1
w2 ip=10.0.0.22

[kube_node:vars]
access_ip=192.168.0.9

[k8s_cluster:children]
kube_control_plane
kube_node
`,
    'group_vars/all.yml': 'loadbalancer_apiserver_port: 7002\nkube_cert_dir: /etc/b\n',
    'pb/group_vars/all.yml': 'loadbalancer_apiserver_port: 7005\n',
    // k8s_cluster is a child of all: its group_vars beat every group_vars/all, the playbook's too.
    'group_vars/k8s_cluster.yml': 'loadbalancer_apiserver_port: 7003\nloadbalancer_apiserver_healthcheck_port: 9003\n',
    'pb/group_vars/k8s_cluster.yml': 'loadbalancer_apiserver_healthcheck_port: 9004\n',
    'host_vars/w1.yml': 'access_ip: 192.168.0.2\n',
    'extra.yml': 'loadbalancer_apiserver_healthcheck_port: 9005\n',
  });
  const inv = await loadInventory(join(dir, 'hosts.ini'), [], undefined, join(dir, 'pb'));
  assert.equal(inv.certDir, '/etc/b', 'group_vars/all over [all:vars]');
  assert.equal(inv.localLbPort, 7003, 'group_vars/k8s_cluster over both group_vars/all');
  assert.equal(inv.localLbHealthcheckPort, 9004, "the playbook's group_vars/k8s_cluster over the inventory's");
  const access = Object.fromEntries(inv.hosts.map((h) => [h.name, h.accessIp]));
  assert.equal(access.w1, '192.168.0.2', 'host_vars/ over the inventory line');
  assert.equal(access.w2, '192.168.0.9', '[kube_node:vars] for a host without its own');
  const withVars = await loadInventory(join(dir, 'hosts.ini'), [join(dir, 'extra.yml')], undefined, join(dir, 'pb'));
  assert.equal(withVars.localLbHealthcheckPort, 9005, '--vars over every group_vars');
});

test('warnings: a host in no kubespray group, a group one edit from kube_control_plane, group_vars for a group the inventory lacks', async () => {
  const dir = await layout('warnings', {
    'hosts.ini': `[kube_control_plane]
cp1 ip=10.0.0.11

[kube_control_plan]
cp2 ip=10.0.0.12

[etcd]
cp1

[kube_node]
w1 ip=10.0.0.21

[monitoring]
mon1 ip=10.0.0.31
`,
    'group_vars/kube_nodes.yml': 'access_ip: 10.9.9.9\n',
  });
  const inv = await loadInventory(join(dir, 'hosts.ini'));
  const text = inv.warnings.join('\n');
  assert.match(text, /group "kube_control_plan" is one edit from kubespray's kube_control_plane; its hosts get no kube_control_plane role/);
  assert.match(text, /host "cp2" is in no kubespray group/);
  assert.match(text, /host "mon1" is in no kubespray group/);
  assert.match(text, /group_vars\/kube_nodes\.yml: no group "kube_nodes" in the inventory/);
  assert.deepEqual(
    inv.hosts.map((h) => h.name),
    ['cp1', 'w1'],
  );
  // The CLI prints them with the plan.
  const r = await runKubeward(['plan', 'endpoints', '--inventory', join(dir, 'hosts.ini')]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout + r.stderr, /group "kube_control_plan" is one edit from/);
});

test('every variables file is checked: bad YAML, a list instead of a mapping, a misspelt variable, each exits 2 naming the file', async () => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ 'group_vars/all.yml': 'a: [\n' }, /group_vars\/all\.yml is not valid YAML/],
    [{ 'group_vars/k8s_cluster/k8s.yml': '- a\n- b\n' }, /group_vars\/k8s_cluster\/k8s\.yml: must be a mapping/],
    [{ 'host_vars/w1.yaml': 'acess_ip: 10.0.0.9\n' }, /host "w1": acess_ip: unknown variable; did you mean access_ip\?/],
    [
      { 'group_vars/all.yml': 'loadbalancer_apiserver_typ: haproxy\n' },
      /loadbalancer_apiserver_typ: unknown variable; did you mean loadbalancer_apiserver_type\?/,
    ],
  ];
  for (const [i, [files, expected]] of cases.entries()) {
    const dir = await layout(`bad-${i}`, { 'inventory.ini': INI, ...files });
    const r = await runKubeward(['plan', 'endpoints', '--inventory', join(dir, 'inventory.ini')]);
    assert.equal(r.code, 2, `${JSON.stringify(files)}: ${r.stderr}`);
    assert.match(r.stderr, expected);
  }
});
