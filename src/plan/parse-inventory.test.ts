import { test } from 'node:test';
import assert from 'node:assert/strict';
import { detectFormat, parseInventory } from './parse-inventory.ts';
import { formatProblem } from './raw-inventory.ts';

function problemsOf(source: string, text: string, vars: string[] = []): string[] {
  const r = parseInventory(
    { source, text },
    vars.map((v, i) => ({ source: `vars${i}.yml`, text: v })),
  );
  assert.equal(r.ok, false, 'expected the inventory to be rejected');
  return r.ok ? [] : r.problems.map(formatProblem);
}

function inventoryOf(source: string, text: string, vars: string[] = []) {
  const r = parseInventory(
    { source, text },
    vars.map((v, i) => ({ source: `vars${i}.yml`, text: v })),
  );
  if (!r.ok) throw new Error(r.problems.map(formatProblem).join('\n'));
  return r.inventory;
}

const INI = `# sample
[all]
node1 ansible_host=95.54.0.12 ip=10.3.0.1 etcd_member_name=etcd1
node2 ansible_host=95.54.0.13 ip=10.3.0.2 access_ip=10.4.0.2 ; a comment
node3 ansible_host=95.54.0.14 ip=10.3.0.3

[kube_control_plane]
node1
node2

[etcd]
node1

[kube_node]
node3

[calico_rr]

[k8s_cluster:children]
kube_control_plane
kube_node
calico_rr

[all:vars]
supplementary_addresses_in_ssl_keys=["api.example.com", "203.0.113.7"]
kube_apiserver_port=6443
etcd_multiaccess=False
`;

test('a kubespray INI inventory is read with groups, children, host vars and group vars', () => {
  const inv = inventoryOf('inventory.ini', INI);
  assert.deepEqual(
    inv.hosts.map((h) => [h.name, h.ip, h.accessIp, h.controlPlane, h.etcd, h.worker]),
    [
      ['node1', '10.3.0.1', '10.3.0.1', true, true, false],
      ['node2', '10.3.0.2', '10.4.0.2', true, false, false],
      ['node3', '10.3.0.3', '10.3.0.3', false, false, true],
    ],
  );
  assert.deepEqual(inv.supplementaryAddresses, ['api.example.com', '203.0.113.7']);
  assert.equal(inv.etcdMultiaccess, false);
});

test('a kubespray YAML hosts file is read, and group_vars files override its vars in order', () => {
  const yaml = `all:\n  hosts:\n    cp1: {ip: 10.0.0.1}\n    w1: {ip: 10.0.0.2}\n  children:\n    kube_control_plane: {hosts: {cp1: }}\n    kube_node: {hosts: {w1: }}\n    k8s_cluster: {children: {kube_control_plane: , kube_node: }}\n  vars:\n    kube_apiserver_port: 6443\n`;
  const inv = inventoryOf('hosts.yaml', yaml, ['kube_apiserver_port: 7443\ncluster_name: prod.local\n', 'dns_domain: "{{ cluster_name }}"\n']);
  assert.equal(inv.apiserverPort, 7443);
  assert.equal(inv.dnsDomain, 'prod.local');
  assert.equal(inv.localLb, true);
  assert.equal(inv.lbType, 'nginx');
});

test('old group names kube-master and kube-node are accepted', () => {
  const inv = inventoryOf('x.ini', '[kube-master]\ncp1 ip=10.0.0.1\n[kube-node]\nw1 ip=10.0.0.2\n[k8s-cluster:children]\nkube-master\nkube-node\n');
  assert.deepEqual(
    inv.hosts.map((h) => [h.name, h.controlPlane, h.worker]),
    [
      ['cp1', true, false],
      ['w1', false, true],
    ],
  );
});

test('the format is picked by extension, then by a leading [section] header', () => {
  assert.equal(detectFormat({ source: 'hosts', text: '# c\n[all]\na ip=1.2.3.4\n' }), 'ini');
  assert.equal(detectFormat({ source: 'hosts', text: 'all:\n  hosts: {}\n' }), 'yaml');
  assert.equal(detectFormat({ source: 'hosts.yml', text: '[all]\n' }), 'yaml');
});

test('extra groups (no_floating, any user group) are accepted, and their vars reach their hosts', () => {
  const inv = inventoryOf(
    'x.ini',
    '[kube_control_plane]\ncp1 ip=10.0.0.1\n[kube_node]\nw1\n[no_floating]\nw1\n[no_floating:vars]\nip=10.0.0.21\n[gpu_nodes]\ncp1\n',
  );
  assert.equal(inv.hosts.find((h) => h.name === 'w1')?.ip, '10.0.0.21');
});

test('a host without ip (and no IP in ansible_host) is rejected naming the host and the field', () => {
  const p = problemsOf(
    'x.yaml',
    'hosts:\n  cp1: {ip: 10.0.0.1}\n  w1: {ansible_host: w1.example.com}\ngroups:\n  kube_control_plane: [cp1]\n  kube_node: [w1]\n',
  );
  assert.ok(
    p.some((m) => m.startsWith('host "w1": ip: missing')),
    p.join('\n'),
  );
});

test('ansible_host stands in for a missing ip when it is an address', () => {
  const inv = inventoryOf('x.ini', '[kube_control_plane]\ncp1 ansible_host=10.0.0.9\n');
  assert.equal(inv.hosts[0]?.ip, '10.0.0.9');
});

test('a duplicate host is rejected: twice in a YAML mapping, twice in an INI section, or with conflicting vars', () => {
  const yaml = problemsOf('x.yaml', 'hosts:\n  cp1: {ip: 10.0.0.1}\n  cp1: {ip: 10.0.0.2}\ngroups:\n  kube_control_plane: [cp1]\n');
  assert.ok(
    yaml.some((m) => m.startsWith('host "cp1": hosts.cp1: duplicate host') && m.includes('line 3')),
    yaml.join('\n'),
  );
  const ini = problemsOf('x.ini', '[kube_control_plane]\ncp1 ip=10.0.0.1\ncp1 ip=10.0.0.1\n');
  assert.ok(
    ini.some((m) => m.startsWith('host "cp1": name: duplicate host')),
    ini.join('\n'),
  );
  const conflict = problemsOf('x.ini', '[all]\ncp1 ip=10.0.0.1\n[kube_control_plane]\ncp1 ip=10.0.0.2\n');
  assert.ok(
    conflict.some((m) => m.startsWith('host "cp1": ip: duplicate host')),
    conflict.join('\n'),
  );
});

test('two hosts with the same ip are rejected', () => {
  const p = problemsOf('x.yaml', 'hosts:\n  cp1: {ip: 10.0.0.1}\n  w1: {ip: 10.0.0.1}\ngroups:\n  kube_control_plane: [cp1]\n  kube_node: [w1]\n');
  assert.ok(
    p.some((m) => m.startsWith('host "w1": ip: 10.0.0.1 is also the ip of host "cp1"')),
    p.join('\n'),
  );
});

test('ports out of range are rejected naming the field', () => {
  const base = 'hosts:\n  cp1: {ip: 10.0.0.1}\ngroups:\n  kube_control_plane: [cp1]\nvars:\n';
  assert.ok(problemsOf('x.yaml', base + '  kube_apiserver_port: 70000\n').some((m) => m === 'kube_apiserver_port: port 70000 is out of range; use 1-65535'));
  assert.ok(
    problemsOf('x.yaml', base + '  loadbalancer_apiserver: {address: 10.0.0.9, port: 0}\n').some((m) =>
      m.startsWith('loadbalancer_apiserver.port: port 0 is out of range'),
    ),
  );
  assert.ok(
    problemsOf('x.yaml', base + '  loadbalancer_apiserver_port: abc\n').some((m) => m.startsWith('loadbalancer_apiserver_port: expected a port number')),
  );
});

test('a misspelt variable is caught with a suggestion, while kubespray variables kubeward does not read are ignored', () => {
  const base = 'hosts:\n  cp1: {ip: 10.0.0.1}\ngroups:\n  kube_control_plane: [cp1]\nvars:\n  kube_network_plugin: calico\n';
  assert.ok(problemsOf('x.yaml', base + '  loadbalancer_apiserver_prot: 6443\n').some((m) => m.includes('did you mean loadbalancer_apiserver_port?')));
  assert.equal(inventoryOf('x.yaml', base).hosts.length, 1);
});

test('a cluster-wide variable set on a host, a bad address and an unknown lb type are each named', () => {
  const p = problemsOf(
    'x.yaml',
    'hosts:\n  cp1: {ip: 10.0.0.1, kube_apiserver_port: 6443}\n  w1: {ip: 10.0.0.300}\ngroups:\n  kube_control_plane: [cp1]\n  kube_node: [w1]\nvars:\n  loadbalancer_apiserver_type: envoy\n',
  );
  assert.ok(
    p.some((m) => m.startsWith('host "cp1": kube_apiserver_port: is cluster-wide')),
    p.join('\n'),
  );
  assert.ok(
    p.some((m) => m.startsWith('host "w1": ip: "10.0.0.300" is not an IPv4 or IPv6 address')),
    p.join('\n'),
  );
  assert.ok(
    p.some((m) => m.startsWith('loadbalancer_apiserver_type: "envoy" is not one of nginx, haproxy, kubeward')),
    p.join('\n'),
  );
});

test('an inventory without control-plane hosts, or a group naming an undefined host, is rejected', () => {
  assert.ok(
    problemsOf('x.yaml', 'hosts:\n  w1: {ip: 10.0.0.1}\ngroups:\n  kube_node: [w1]\n').some((m) =>
      m.startsWith('group "kube_control_plane": hosts: no control-plane hosts'),
    ),
  );
  assert.ok(
    problemsOf('x.yaml', 'hosts:\n  cp1: {ip: 10.0.0.1}\ngroups:\n  kube_control_plane: [cp1, cp9]\n').some((m) =>
      m.startsWith('host "cp9": hosts: listed in group "kube_control_plane" but not defined'),
    ),
  );
});

test('an external LB together with loadbalancer_apiserver_localhost: true is accepted (kubespray ha-mode.md: "Local LB + Unmanaged here LB")', () => {
  const inv = inventoryOf(
    'x.yaml',
    'hosts:\n  cp1: {ip: 10.0.0.1}\ngroups:\n  kube_control_plane: [cp1]\nvars:\n  loadbalancer_apiserver: {address: 10.0.0.9}\n  loadbalancer_apiserver_localhost: true\n',
  );
  assert.equal(inv.localLb, true);
  assert.equal(inv.lbDomainName, 'localhost', 'roles/kubespray_defaults/defaults/main/main.yml: localhost when loadbalancer_apiserver_localhost');
});

test('Jinja that needs Ansible facts or functions is rejected naming the variable and the fact', () => {
  const base = 'hosts:\n  cp1: {ip: 10.0.0.1}\ngroups:\n  kube_control_plane: [cp1]\nvars:\n';
  const p = problemsOf('x.yaml', base + '  apiserver_loadbalancer_domain_name: "{{ ansible_fqdn }}"\n');
  assert.ok(
    p.some((m) => m.startsWith('apiserver_loadbalancer_domain_name: "{{ ansible_fqdn }}": needs the Ansible fact ansible_fqdn')),
    p.join('\n'),
  );
  const q = problemsOf('x.yaml', base + "  kube_cert_dir: \"{{ lookup('env', 'HOME') }}/ssl\"\n");
  assert.ok(
    q.some((m) => m.startsWith('kube_cert_dir: ') && m.includes('lookup')),
    q.join('\n'),
  );
});

test('invalid YAML is one problem with its line, not an exception', () => {
  const p = problemsOf('x.yaml', 'hosts:\n  cp1: {ip: 10.0.0.1\n');
  assert.equal(p.length, 1);
  assert.match(p[0]!, /not valid YAML.*line/);
});
