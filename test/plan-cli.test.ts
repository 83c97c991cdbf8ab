// kubeward plan as a process: render into a directory, --check against it, the machine-readable
// outputs, and bad inventories and flags exiting 2 with messages naming the host and field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execCommand } from '../src/sys/exec.ts';
import { kubewardArgv } from '../testkit/kubeward-process.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const example = (name: string) => join(ROOT, 'examples/inventory', name);

function kubeward(...args: string[]) {
  return execCommand(kubewardArgv(args), { okCodes: [0, 1, 2], timeoutMs: 20_000 });
}

test('render writes the plan, --check then passes, and a hand edit makes --check exit 1 with a unified diff', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-plan-cli-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const inv = example('local-nginx.yaml');
  const first = await kubeward('plan', 'render', '--inventory', inv, '--out', dir);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /wrote \d+ of \d+ files/);
  const conf = join(dir, 'nodes/node1/etc/nginx/nginx.conf');
  assert.match(await readFile(conf, 'utf8'), /least_conn;/);

  const clean = await kubeward('plan', 'render', '--inventory', inv, '--out', dir, '--check');
  assert.equal(clean.code, 0, clean.stdout + clean.stderr);
  assert.equal(clean.stdout, '');
  assert.match(clean.stderr, /files match the plan/);

  const edited = (await readFile(conf, 'utf8')).replace('proxy_connect_timeout 1s;', 'proxy_connect_timeout 60s;');
  await writeFile(conf, edited);
  await writeFile(join(dir, 'nodes/stale-node.txt'), 'left over\n');
  const stale = await kubeward('plan', 'render', '--inventory', inv, '--out', dir, '--check');
  assert.equal(stale.code, 1);
  assert.match(stale.stdout, /^--- a\/nodes\/node1\/etc\/nginx\/nginx\.conf\n\+\+\+ b\/nodes\/node1\/etc\/nginx\/nginx\.conf\n@@ /m);
  assert.match(stale.stdout, /^- {4}proxy_connect_timeout 60s;\n\+ {4}proxy_connect_timeout 1s;$/m);
  assert.match(stale.stderr, /1 of \d+ files differ/);
  assert.match(stale.stderr, /nodes\/stale-node\.txt is in .* but not in the plan \(left alone\)/);
  assert.equal(await readFile(conf, 'utf8'), edited, '--check writes nothing');

  const again = await kubeward('plan', 'render', '--inventory', inv, '--out', dir);
  assert.equal(again.code, 0);
  assert.match(again.stdout, /wrote 1 of \d+ files/);
  assert.equal(await readFile(join(dir, 'nodes/stale-node.txt'), 'utf8'), 'left over\n', 'render never deletes');
});

test('endpoints -o json and --node give one node for machines', async () => {
  const r = await kubeward('plan', 'endpoints', '--inventory', example('external-lb.ini'), '--node', 'worker-1', '-o', 'json');
  assert.equal(r.code, 0, r.stderr);
  const plan = JSON.parse(r.stdout) as { nodes: { name: string; endpoints: { component: string; url: string }[] }[] };
  assert.deepEqual(
    plan.nodes.map((n) => n.name),
    ['worker-1'],
  );
  assert.equal(plan.nodes[0]!.endpoints.find((e) => e.component === 'kubelet')?.url, 'https://api.cluster.example.com:8383');
});

test('sans prints the kubeadm certSANs fragment, and kubespray group_vars files are applied with --vars', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-plan-vars-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'all.yml'), 'supplementary_addresses_in_ssl_keys:\n  - k8s.example.org\nkube_network_plugin: cilium\n');
  const r = await kubeward('plan', 'sans', '--inventory', example('external-lb.ini'), '--vars', join(dir, 'all.yml'), '--format', 'kubeadm');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^kind: ClusterConfiguration$/m);
  assert.match(r.stdout, /^ {4}- "k8s\.example\.org"$/m);
  assert.match(r.stdout, /^ {4}- "api\.cluster\.example\.com"$/m);
  assert.match(r.stdout, /^ {4}- "10\.0\.0\.100"$/m);
});

test('a bad inventory exits 2 with one line per problem, each naming the host and the field', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-plan-bad-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'bad.ini');
  await writeFile(
    file,
    '[kube_control_plane]\ncp1 ip=10.0.0.1\n[kube_node]\nw1 ansible_user=ubuntu\nw1 ip=10.0.0.2\n[gpu]\nw1\n[all:vars]\nkube_apiserver_port=99999\n',
  );
  const r = await kubeward('plan', 'endpoints', '--inventory', file);
  assert.equal(r.code, 2);
  const lines = r.stderr.trim().split('\n');
  assert.ok(
    lines.every((l) => l.startsWith(`kubeward plan endpoints: ${file}: `)),
    r.stderr,
  );
  assert.ok(
    lines.some((l) => /host "w1": name: duplicate host: listed twice in \[kube_node\]/.test(l)),
    r.stderr,
  );
  assert.ok(
    lines.some((l) => l.endsWith('kube_apiserver_port: port 99999 is out of range; use 1-65535')),
    r.stderr,
  );
});

test('bad flags exit 2 with one line', async () => {
  const missing = await kubeward('plan', 'render', '--inventory', example('no-lb.yaml'));
  assert.equal(missing.code, 2);
  assert.equal(missing.stderr, 'kubeward plan render: --out: required; give the directory to write into\n');
  const unknownNode = await kubeward('plan', 'endpoints', '--inventory', example('no-lb.yaml'), '--node', 'nope');
  assert.equal(unknownNode.code, 2);
  assert.match(unknownNode.stderr, /--node nope: not a cluster node in the inventory; nodes: cp1, cp2, node1/);
  const unreadable = await kubeward('plan', 'sans', '--inventory', '/nonexistent/hosts.yaml');
  assert.equal(unreadable.code, 2);
  assert.match(unreadable.stderr, /--inventory \/nonexistent\/hosts\.yaml: cannot read the file/);
});

test('--kubespray-version picks the older behaviour: v2.28 writes /etc/hosts lines with lb-apiserver.kubernetes.local, the default writes none', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-plan-version-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const inv = join(dir, 'inv.yaml');
  await writeFile(
    inv,
    'hosts:\n  cp1: {ip: 10.0.0.11}\n  w1: {ip: 10.0.0.21}\ngroups:\n  kube_control_plane: [cp1]\n  kube_node: [w1]\nvars:\n  loadbalancer_apiserver: {address: 10.0.0.100, port: 8383}\n  loadbalancer_apiserver_port: 6443\n',
  );
  const old = await kubeward('plan', 'render', '--inventory', inv, '--out', join(dir, 'old'), '--kubespray-version', 'v2.28.1');
  assert.equal(old.code, 0, old.stderr);
  // v2.28.0 roles/kubernetes/preinstall/tasks/0090-etchosts.yml.
  assert.match(await readFile(join(dir, 'old/cluster/etc-hosts'), 'utf8'), /^10\.0\.0\.100 lb-apiserver\.kubernetes\.local$/m);
  const now = await kubeward('plan', 'render', '--inventory', inv, '--out', join(dir, 'now'));
  assert.equal(now.code, 0, now.stderr);
  assert.doesNotMatch(now.stdout, /etc-hosts/);
  assert.match(await readFile(join(dir, 'now/nodes/w1/endpoints.yaml'), 'utf8'), /server: "https:\/\/10\.0\.0\.100:8383"/);
});

test("render --check warns about another LB type's static pod left in DIR (kubespray's tasks delete it; both would bind the port)", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-plan-other-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const inv = example('local-nginx.yaml');
  assert.equal((await kubeward('plan', 'render', '--inventory', inv, '--out', dir)).code, 0);
  await writeFile(join(dir, 'nodes/node1/etc/kubernetes/manifests/haproxy.yml'), 'kind: Pod\n');
  const r = await kubeward('plan', 'render', '--inventory', inv, '--out', dir, '--check');
  assert.equal(r.code, 0);
  assert.match(r.stderr, /warning: nodes\/node1\/etc\/kubernetes\/manifests\/haproxy\.yml is in .* the static pod of another load balancer type/);
});
