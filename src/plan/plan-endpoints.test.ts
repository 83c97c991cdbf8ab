import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseInventory } from './parse-inventory.ts';
import { planEndpoints, type ClusterPlan } from './plan-endpoints.ts';
import { parseKubesprayVersion } from './kubespray-defaults.ts';

/** Two control-plane nodes (cp1 with access_ip, cp2 without) and two workers (w1 with access_ip, w2 without). */
function plan(vars: string, opts: { cp1AccessIp?: boolean; kubespray?: string } = {}): ClusterPlan {
  const cp1 = opts.cp1AccessIp === false ? '{ip: 10.0.0.11}' : '{ip: 10.0.0.11, access_ip: 192.168.0.11}';
  const text = `hosts:\n  cp1: ${cp1}\n  cp2: {ip: 10.0.0.12}\n  w1: {ip: 10.0.0.21, access_ip: 192.168.0.21}\n  w2: {ip: 10.0.0.22}\ngroups:\n  kube_control_plane: [cp1, cp2]\n  etcd: [cp1, cp2]\n  kube_node: [w1, w2]\nvars:\n${vars}\n`;
  const r = parseInventory({ source: 'test.yaml', text }, [], opts.kubespray ? { kubespray: parseKubesprayVersion(opts.kubespray)! } : {});
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return planEndpoints(r.inventory);
}

function url(p: ClusterPlan, node: string, component: string): string | undefined {
  return p.nodes.find((n) => n.name === node)?.endpoints.find((e) => e.component === component)?.url;
}

test('local LB (the default): control-plane nodes use 127.0.0.1:sp, workers localhost:nsp, outsiders the first control plane', () => {
  const p = plan('  loadbalancer_apiserver_port: 7443');
  assert.equal(url(p, 'cp1', 'kubelet'), 'https://127.0.0.1:6443');
  assert.equal(url(p, 'cp2', 'kubelet'), 'https://127.0.0.1:6443');
  assert.equal(url(p, 'w1', 'kubelet'), 'https://localhost:7443');
  assert.equal(url(p, 'w2', 'kubelet'), 'https://localhost:7443');
  assert.equal(p.external.url, 'https://192.168.0.11:6443');
  assert.equal(p.nodes.find((n) => n.name === 'w1')?.localLb?.frontends[0]?.port, 7443);
  assert.equal(p.nodes.find((n) => n.name === 'cp1')?.localLb, undefined, 'no local LB on control-plane nodes with the wildcard bind address');
});

test('local LB upstreams are every control-plane access_ip, falling back to ip', () => {
  const p = plan('  etcd_multiaccess: true');
  const ups = p.nodes.find((n) => n.name === 'w1')?.localLb?.frontends[0]?.upstreams.map((u) => `${u.host}:${u.port}`);
  assert.deepEqual(ups, ['192.168.0.11:6443', '10.0.0.12:6443']);
});

test('local LB: kube-proxy uses https://127.0.0.1:<kube_apiserver_port> everywhere (roles/kubernetes/kubeadm/tasks/main.yml); with nsp ≠ sp it warns', () => {
  const same = plan('  cluster_name: cluster.local');
  assert.equal(url(same, 'w2', 'kube-proxy'), 'https://127.0.0.1:6443');
  assert.equal(url(same, 'cp1', 'kube-proxy'), 'https://127.0.0.1:6443');
  const differ = plan('  loadbalancer_apiserver_port: 7443');
  assert.equal(url(differ, 'w2', 'kube-proxy'), 'https://127.0.0.1:6443');
  assert.match(differ.warnings.join('\n'), /points kube-proxy at https:\/\/127\.0\.0\.1:6443, where nothing listens on workers/);
});

test('local LB with a custom bind address: control-plane nodes use it and also run the local LB', () => {
  const p = plan('  kube_apiserver_bind_address: 10.0.0.11');
  assert.equal(url(p, 'cp1', 'kubelet'), 'https://10.0.0.11:6443');
  assert.deepEqual(
    p.nodes.find((n) => n.name === 'cp1')?.localLb?.frontends.map((f) => f.name),
    ['apiserver'],
  );
  assert.equal(url(p, 'w1', 'kubelet'), 'https://localhost:6443');
});

test('external LB without internal: every node, control plane included, and kube-proxy use the LB name and port (kube_apiserver_endpoint)', () => {
  const p = plan('  apiserver_loadbalancer_domain_name: api.example.com\n  loadbalancer_apiserver: {address: 10.0.0.100, port: 8383}');
  // roles/kubespray_defaults/defaults/main/main.yml: the loadbalancer_apiserver branch comes before the control-plane one.
  assert.equal(url(p, 'cp1', 'kubelet'), 'https://api.example.com:8383');
  assert.equal(url(p, 'w1', 'kubelet'), 'https://api.example.com:8383');
  assert.equal(url(p, 'w2', 'kubelet'), 'https://api.example.com:8383');
  assert.equal(url(p, 'cp2', 'kube-proxy'), 'https://api.example.com:8383');
  assert.equal(p.external.url, 'https://api.example.com:8383');
  assert.ok(
    p.nodes.every((n) => n.localLb === undefined),
    'no node-local LB with an external one',
  );
  assert.deepEqual(
    p.externalLb?.upstreams.map((u) => u.host),
    ['192.168.0.11', '10.0.0.12'],
  );
});

test('external LB port defaults to kube_apiserver_port and the domain to the address (v2.30+), lb-apiserver.kubernetes.local before', () => {
  const p = plan('  loadbalancer_apiserver: {address: 10.0.0.100}');
  // roles/kubespray_defaults/defaults/main/main.yml (v2.30.0+): loadbalancer_apiserver.address | d(undef()).
  assert.equal(url(p, 'w1', 'kubelet'), 'https://10.0.0.100:6443');
  assert.match(p.warnings.join('\n'), /cannot bind it while the apiserver binds every address/);
  const old = plan('  loadbalancer_apiserver: {address: 10.0.0.100}', { kubespray: '2.29' });
  // v2.29.0 roles/kubespray_defaults/defaults/main/main.yml: apiserver_loadbalancer_domain_name: "lb-apiserver.kubernetes.local".
  assert.equal(url(old, 'w1', 'kubelet'), 'https://lb-apiserver.kubernetes.local:6443');
});

test('neither LB: workers use the first control plane access_ip (or ip without one) and the plan warns', () => {
  const withAccess = plan('  loadbalancer_apiserver_localhost: false');
  assert.equal(url(withAccess, 'w1', 'kubelet'), 'https://192.168.0.11:6443');
  assert.equal(url(withAccess, 'cp2', 'kubelet'), 'https://127.0.0.1:6443');
  assert.match(withAccess.warnings.join('\n'), /losing it takes them down/);
  const withoutAccess = plan('  loadbalancer_apiserver_localhost: false', { cp1AccessIp: false });
  assert.equal(url(withoutAccess, 'w2', 'kubelet'), 'https://10.0.0.11:6443');
  assert.match(withoutAccess.nodes.find((n) => n.name === 'w2')!.endpoints[0]!.reason, /ip \(no access_ip\)/);
  assert.equal(withoutAccess.external.url, 'https://10.0.0.11:6443');
});

test('controller-manager/scheduler rows exist only on control-plane nodes and use the insecure port when set', () => {
  const secure = plan('  cluster_name: cluster.local');
  assert.equal(url(secure, 'cp1', 'controller-manager/scheduler'), 'https://127.0.0.1:6443');
  assert.equal(url(secure, 'w1', 'controller-manager/scheduler'), undefined);
  const insecure = plan('  kube_apiserver_insecure_port: 8080');
  assert.equal(url(insecure, 'cp2', 'controller-manager/scheduler'), 'http://127.0.0.1:8080');
  assert.match(insecure.warnings.join('\n'), /removed in Kubernetes 1.24/);
});

test('etcd clients get the member list by default, or a local proxy when etcd_multiaccess is false', () => {
  const multi = plan('  cluster_name: cluster.local');
  assert.equal(url(multi, 'w1', 'etcd-clients'), 'https://192.168.0.11:2379,https://10.0.0.12:2379');
  const local = plan('  etcd_multiaccess: false');
  assert.equal(url(local, 'w1', 'etcd-clients'), 'https://127.0.0.1:2379');
  assert.deepEqual(
    local.nodes.find((n) => n.name === 'w1')?.localLb?.frontends.map((f) => f.name),
    ['apiserver', 'etcd'],
  );
  assert.equal(local.nodes.find((n) => n.name === 'cp1')?.localLb, undefined, 'etcd members answer locally themselves');
});

test('IPv6 addresses are bracketed in URLs', () => {
  const text =
    'hosts:\n  cp1: {ip6: "fd00::11"}\n  w1: {ip6: "fd00::21"}\ngroups:\n  kube_control_plane: [cp1]\n  kube_node: [w1]\nvars:\n  loadbalancer_apiserver_localhost: false\n  ipv4_stack: false\n  ipv6_stack: true\n';
  const r = parseInventory({ source: 'v6.yaml', text });
  assert.ok(r.ok, JSON.stringify(!r.ok && r.problems));
  const p = planEndpoints(r.inventory);
  assert.equal(url(p, 'w1', 'kubelet'), 'https://[fd00::11]:6443');
  assert.equal(url(p, 'w1', 'etcd-clients'), 'https://[fd00::11]:2379');
});
