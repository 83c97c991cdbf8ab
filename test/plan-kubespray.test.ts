// kubeward plan against kubespray v2.30+: kubespray's own sample inventory and group_vars
// (test/fixtures/kubespray-sample, Apache-2.0, see its NOTICE) and one inventory per kubespray
// setting that changes the plan. Every expected value names the kubespray file it comes from (kubernetes-sigs/kubespray
// HEAD 46dbdd399, 2026-08-21, same values as v2.31.0 unless said otherwise).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parseInventory, type InventoryText } from '../src/plan/parse-inventory.ts';
import { formatProblem } from '../src/plan/raw-inventory.ts';
import { planEndpoints, type ClusterPlan } from '../src/plan/plan-endpoints.ts';
import { renderPlan, type RenderedFile } from '../src/plan/render-plan.ts';
import { computeSans } from '../src/plan/apiserver-sans.ts';
import { parseKubesprayVersion } from '../src/plan/kubespray-defaults.ts';
import type { Inventory } from '../src/plan/inventory.ts';

const SAMPLE = join(new URL('..', import.meta.url).pathname, 'test/fixtures/kubespray-sample');
const SAMPLE_INI = readFileSync(join(SAMPLE, 'inventory.ini'), 'utf8');
/** Every sample group_vars file, as a user passes them with --vars. */
const SAMPLE_VARS: InventoryText[] = ['all', 'k8s_cluster'].flatMap((g) =>
  readdirSync(join(SAMPLE, 'group_vars', g))
    .sort()
    .map((f) => ({ source: `group_vars/${g}/${f}`, text: readFileSync(join(SAMPLE, 'group_vars', g, f), 'utf8') })),
);

function build(text: string, opts: { source?: string; vars?: InventoryText[]; kubespray?: string } = {}): Inventory {
  const r = parseInventory(
    { source: opts.source ?? 'inv.yaml', text },
    opts.vars ?? [],
    opts.kubespray ? { kubespray: parseKubesprayVersion(opts.kubespray)! } : {},
  );
  if (!r.ok) throw new Error(r.problems.map(formatProblem).join('\n'));
  return r.inventory;
}

function url(p: ClusterPlan, node: string, component: string): string | undefined {
  return p.nodes.find((n) => n.name === node)?.endpoints.find((e) => e.component === component)?.url;
}

function file(files: RenderedFile[], path: string): string {
  const f = files.find((x) => x.path === path);
  assert.ok(f, `${path} is rendered; rendered: ${files.map((x) => x.path).join(', ')}`);
  return f.content;
}

/** A kubeward YAML inventory: cp1, cp2 (control plane, etcd) and w1, w2 (workers), plus vars. */
function yamlInventory(vars: Record<string, unknown>, hostVars: Record<string, Record<string, unknown>> = {}): string {
  const hosts: Record<string, Record<string, unknown>> = {
    cp1: { ip: '10.0.0.11', ...hostVars.cp1 },
    cp2: { ip: '10.0.0.12', ...hostVars.cp2 },
    w1: { ip: '10.0.0.21', ...hostVars.w1 },
    w2: { ip: '10.0.0.22', ...hostVars.w2 },
  };
  return JSON.stringify({ hosts, groups: { kube_control_plane: ['cp1', 'cp2'], etcd: ['cp1', 'cp2'], kube_node: ['w1', 'w2'] }, vars });
}

describe("kubespray's sample inventory and group_vars", () => {
  test('verbatim (every host commented out): the only problem is the missing control plane, not the Jinja in k8s-cluster.yml', () => {
    // inventory/sample/inventory.ini comments out every host; k8s-cluster.yml has kube_cert_dir: "{{ kube_config_dir }}/ssl".
    const r = parseInventory({ source: 'inventory.ini', text: SAMPLE_INI }, SAMPLE_VARS);
    assert.equal(r.ok, false);
    assert.deepEqual(!r.ok && r.problems.map(formatProblem), [
      'group "kube_control_plane": hosts: no control-plane hosts; list at least one host in kube_control_plane',
    ]);
  });

  test('hosts uncommented as a new user does (ip still a comment): accepted, each missing ip warned with the fact kubespray would use', () => {
    const inv = build(SAMPLE_INI.replace(/^# (node\d)/gm, '$1'), { source: 'inventory.ini', vars: SAMPLE_VARS });
    // roles/network_facts/tasks/main.yaml: _ipv4: "{{ ip | default(fallback_ip) }}", fallback_ip = ansible_default_ipv4.address.
    assert.equal(inv.hosts.length, 6);
    assert.match(inv.warnings.join('\n'), /node1: no ip; kubespray would use the default-route address \(ansible_default_ipv4\).*ansible_host 95\.54\.0\.12/);
    // inventory/sample/group_vars/k8s_cluster/k8s-cluster.yml: kube_cert_dir: "{{ kube_config_dir }}/ssl", kube_config_dir: /etc/kubernetes.
    assert.equal(inv.certDir, '/etc/kubernetes/ssl');
    // inventory/sample/group_vars/all/all.yml: loadbalancer_apiserver_port: 6443, loadbalancer_apiserver_healthcheck_port: 8081.
    assert.equal(inv.localLbPort, 6443);
    assert.equal(inv.localLbHealthcheckPort, 8081);
    // inventory/sample/group_vars/k8s_cluster/k8s-cluster.yml: dns_domain: "{{ cluster_name }}", cluster_name: cluster.local.
    assert.equal(inv.dnsDomain, 'cluster.local');
  });

  test('hosts and ip uncommented: the v2.30+ endpoint table, file names and SANs', () => {
    const inv = build(SAMPLE_INI.replace(/^# (node\d)/gm, '$1').replace(/ {2}# ip=/g, ' ip='), { source: 'inventory.ini', vars: SAMPLE_VARS });
    assert.deepEqual(
      inv.hosts.map((h) => h.ip),
      ['10.3.0.1', '10.3.0.2', '10.3.0.3', '10.3.0.4', '10.3.0.5', '10.3.0.6'],
    );
    assert.deepEqual(inv.warnings, []);
    const p = planEndpoints(inv);
    // roles/kubespray_defaults/defaults/main/main.yml kube_apiserver_endpoint: localhost LB for non-control-plane hosts,
    // kube_apiserver_bind_address "::" mapped to 127.0.0.1 on control-plane hosts.
    assert.equal(url(p, 'node4', 'kubelet'), 'https://localhost:6443');
    assert.equal(url(p, 'node1', 'kubelet'), 'https://127.0.0.1:6443');
    // roles/kubernetes/kubeadm/tasks/main.yml "Update server field in kube-proxy kubeconfig": https://127.0.0.1:{{ kube_apiserver_port }}.
    assert.equal(url(p, 'node5', 'kube-proxy'), 'https://127.0.0.1:6443');
    // kube_apiserver_global_endpoint: https://localhost:{{ loadbalancer_apiserver_port | default(kube_apiserver_port) }}.
    assert.equal(p.global.url, 'https://localhost:6443');
    const files = renderPlan(inv);
    // roles/kubernetes/node/tasks/loadbalancer/nginx-proxy.yml: dest "{{ kube_manifest_dir }}/nginx-proxy.yml", config in nginx_config_dir.
    assert.ok(files.some((f) => f.path === 'nodes/node4/etc/kubernetes/manifests/nginx-proxy.yml'));
    assert.ok(files.some((f) => f.path === 'nodes/node4/etc/nginx/nginx.conf'));
    // Since v2.29.0 (commit 15c8a4768, "Do not alter etc/hosts") nothing is written to /etc/hosts.
    assert.ok(!files.some((f) => f.path === 'cluster/etc-hosts'));
    // roles/kubernetes/control-plane/tasks/kubeadm-setup.yml apiserver_sans: apiserver_loadbalancer_domain_name is
    // "localhost" with the local LB (roles/kubespray_defaults/defaults/main/main.yml, v2.30.0+).
    const sans = computeSans(inv).map((s) => s.value);
    assert.ok(sans.includes('localhost') && !sans.includes('lb-apiserver.kubernetes.local'), sans.join(' '));
    assert.match(file(files, 'cluster/apiserver-sans.txt'), /# kubespray also adds these from Ansible facts/);
  });
});

describe('one inventory per kubespray setting that changes the plan', () => {
  test('1. Jinja with kubespray precedence: kube_config_dir set in the inventory moves kube_cert_dir and kube_manifest_dir', () => {
    // inventory/sample/group_vars/k8s_cluster/k8s-cluster.yml: kube_cert_dir: "{{ kube_config_dir }}/ssl", kube_manifest_dir: "{{ kube_config_dir }}/manifests".
    const k8sCluster = SAMPLE_VARS.find((v) => v.source.endsWith('k8s-cluster.yml'))!;
    const inv = build(yamlInventory({ loadbalancer_apiserver_type: 'kubeward' }), {
      vars: [k8sCluster, { source: 'mine.yml', text: 'kube_config_dir: /opt/k8s\n' }],
    });
    assert.equal(inv.certDir, '/opt/k8s/ssl');
    assert.equal(inv.manifestDir, '/opt/k8s/manifests');
    const files = renderPlan(inv);
    assert.ok(files.some((f) => f.path === 'nodes/w1/opt/k8s/manifests/kubeward-proxy.yml'));
    assert.match(file(files, 'nodes/w1/etc/kubeward/proxy.yaml'), /caFile: "\/opt\/k8s\/ssl\/ca\.crt"/);
    // Filters and concatenation as kubespray's defaults write them.
    const more = build(
      yamlInventory({
        cluster_name: 'prod.example',
        dns_domain: "{{ 'k8s.' ~ cluster_name | lower }}",
        supplementary_addresses_in_ssl_keys: ["{{ lb_ip | default('203.0.113.9') | ansible.utils.ipwrap }}"],
      }),
    );
    assert.equal(more.dnsDomain, 'k8s.prod.example');
    assert.deepEqual(more.supplementaryAddresses, ['203.0.113.9']);
  });

  test('1b. Jinja that needs facts is refused naming the variable and the fact', () => {
    const r = parseInventory({ source: 'inv.yaml', text: yamlInventory({}, { w1: { ip: '{{ ansible_default_ipv4.address }}' } }) });
    assert.equal(r.ok, false);
    assert.deepEqual(!r.ok && r.problems.map(formatProblem), [
      'host "w1": ip: "{{ ansible_default_ipv4.address }}": needs the Ansible fact ansible_default_ipv4, which only a run on the host knows; write the value itself',
    ]);
  });

  test('2. LB domain name: localhost with the local LB, the address with an external LB (v2.30+); --kubespray-version 2.29 and 2.28 keep the old name and /etc/hosts', () => {
    const vars = { loadbalancer_apiserver: { address: '10.0.0.100', port: 8383 } };
    const now = build(yamlInventory(vars));
    // roles/kubespray_defaults/defaults/main/main.yml (v2.30.0): "{{ 'localhost' if loadbalancer_apiserver_localhost else (loadbalancer_apiserver.address | d(undef())) }}".
    assert.equal(now.lbDomainName, '10.0.0.100');
    assert.equal(url(planEndpoints(now), 'w1', 'kubelet'), 'https://10.0.0.100:8383');
    assert.ok(!renderPlan(now).some((f) => f.path === 'cluster/etc-hosts'));
    const v229 = build(yamlInventory(vars), { kubespray: 'v2.29.1' });
    // v2.29.0 roles/kubespray_defaults/defaults/main/main.yml: apiserver_loadbalancer_domain_name: "lb-apiserver.kubernetes.local".
    assert.equal(url(planEndpoints(v229), 'w1', 'kubelet'), 'https://lb-apiserver.kubernetes.local:8383');
    assert.ok(!renderPlan(v229).some((f) => f.path === 'cluster/etc-hosts'), 'v2.29.0 already writes no /etc/hosts');
    const v228 = build(yamlInventory(vars), { kubespray: '2.28' });
    // v2.28.0 roles/kubernetes/preinstall/tasks/0090-etchosts.yml: "{{ loadbalancer_apiserver.address }} {{ apiserver_loadbalancer_domain_name }}".
    assert.match(file(renderPlan(v228), 'cluster/etc-hosts'), /^10\.0\.0\.100 lb-apiserver\.kubernetes\.local$/m);
    assert.equal(build(yamlInventory({})).lbDomainName, 'localhost');
  });

  test('3. external LB: control-plane nodes go through it as well (kube_apiserver_endpoint checks loadbalancer_apiserver first)', () => {
    const p = planEndpoints(
      build(yamlInventory({ apiserver_loadbalancer_domain_name: 'api.example.com', loadbalancer_apiserver: { address: '10.0.0.100', port: 8383 } })),
    );
    // roles/kubespray_defaults/defaults/main/main.yml kube_apiserver_endpoint, first branch.
    assert.equal(url(p, 'cp1', 'kubelet'), 'https://api.example.com:8383');
    assert.equal(url(p, 'w2', 'kubelet'), 'https://api.example.com:8383');
    // roles/kubernetes/kubeadm/tasks/main.yml "Update server field in kube-proxy kubeconfig - external lb".
    assert.equal(url(p, 'cp2', 'kube-proxy'), 'https://api.example.com:8383');
    assert.equal(p.global.url, 'https://api.example.com:8383');
    assert.ok(p.nodes.every((n) => n.localLb === undefined));
  });

  test('4. IPv6-only (ipv4_stack: false): ip6/access_ip6 for upstreams, etcd and SANs', () => {
    const inv = build(
      yamlInventory(
        { ipv4_stack: false, ipv6_stack: true },
        { cp1: { ip6: 'fd00::11', access_ip6: 'fd01::11' }, cp2: { ip6: 'fd00::12' }, w1: { ip6: 'fd00::21' }, w2: { ip6: 'fd00::22' } },
      ),
    );
    // roles/network_facts/tasks/main.yaml: main_ip "{{ _ipv4 if ipv4_stack else _ipv6 }}", _ipv6 = ip6, _access_ipv6 = access_ip6 | default(_ipv6).
    assert.deepEqual(
      inv.hosts.map((h) => h.accessIp),
      ['fd01::11', 'fd00::12', 'fd00::21', 'fd00::22'],
    );
    const p = planEndpoints(inv);
    // roles/kubernetes/node/templates/loadbalancer/nginx.conf.j2: main_access_ip | ipwrap; [::1] listen with ipv6_stack.
    assert.deepEqual(
      p.nodes.find((n) => n.name === 'w1')?.localLb?.frontends[0]?.upstreams.map((u) => u.host),
      ['fd01::11', 'fd00::12'],
    );
    assert.deepEqual(p.nodes.find((n) => n.name === 'w1')?.localLb?.frontends[0]?.listen, ['127.0.0.1', '::1']);
    // roles/kubespray_defaults/defaults/main/main.yml etcd_access_addresses: main_access_ip | ipwrap.
    assert.equal(url(p, 'w1', 'etcd-clients'), 'https://[fd01::11]:2379,https://[fd00::12]:2379');
    // roles/kubernetes/control-plane/tasks/kubeadm-setup.yml apiserver_sans: main_access_ip and main_ip of each control-plane host;
    // kube_apiserver_ip is the first address of kube_service_addresses_ipv6 on IPv6-only clusters.
    const sans = computeSans(inv).map((s) => s.value);
    for (const ip of ['fd01::11', 'fd00::11', 'fd00::12', 'fd85:ee78:d8a6:8607::1001']) assert.ok(sans.includes(ip), `${ip} in ${sans.join(' ')}`);
    assert.ok(!sans.some((s) => s.startsWith('10.')), 'no IPv4 node addresses');
    assert.match(file(renderPlan(inv), 'nodes/w1/etc/nginx/nginx.conf'), /server \[fd01::11\]:6443;/);
  });

  test('5. manifest names: nginx-proxy.yml and haproxy.yml, as kubespray writes (and deletes) them', () => {
    // roles/kubernetes/node/tasks/loadbalancer/haproxy.yml: dest "{{ kube_manifest_dir }}/haproxy.yml", config "{{ haproxy_config_dir }}/haproxy.cfg".
    const files = renderPlan(build(yamlInventory({ loadbalancer_apiserver_type: 'haproxy' })));
    assert.ok(files.some((f) => f.path === 'nodes/w1/etc/kubernetes/manifests/haproxy.yml'));
    assert.ok(files.some((f) => f.path === 'nodes/w1/etc/haproxy/haproxy.cfg'));
    assert.ok(!files.some((f) => f.path.endsWith('.yaml') && f.path.includes('manifests')));
  });

  test('6. extra groups and the kube-vip setup exactly as docs/ingress/kube-vip.md writes it are accepted; no HAProxy or MetalLB files for a kube-vip VIP', () => {
    const ini = [
      '[kube_control_plane]',
      'cp1 ip=10.0.0.11',
      'cp2 ip=10.0.0.12',
      '[etcd:children]',
      'kube_control_plane',
      '[kube_node]',
      'w1 ip=10.0.0.21',
      '[no_floating]',
      'w1',
      '[bastion]',
      'jump ansible_host=203.0.113.5',
      '[calico_rr]',
      '[k8s_cluster:children]',
      'kube_control_plane',
      'kube_node',
      'calico_rr',
    ].join('\n');
    // docs/ingress/kube-vip.md: kube_vip_enabled, kube_vip_controlplane_enabled, kube_vip_address, loadbalancer_apiserver.address "{{ kube_vip_address }}".
    const kubeVip = {
      source: 'k8s-cluster.yml',
      text: 'kube_vip_enabled: true\nkube_vip_controlplane_enabled: true\nkube_vip_address: 10.42.42.42\nloadbalancer_apiserver:\n  address: "{{ kube_vip_address }}"\n  port: 6443\nkube_proxy_strict_arp: true\n',
    };
    const inv = build(ini, { source: 'inventory.ini', vars: [kubeVip] });
    assert.equal(inv.externalLb?.address, '10.42.42.42');
    assert.equal(inv.externalLb?.provider, 'kube-vip');
    const p = planEndpoints(inv);
    assert.equal(url(p, 'w1', 'kubelet'), 'https://10.42.42.42:6443');
    assert.doesNotMatch(p.warnings.join('\n'), /cannot bind/, 'no HAProxy holds a kube-vip VIP');
    const files = renderPlan(inv);
    assert.ok(!files.some((f) => f.path.startsWith('cluster/external-lb/') || f.path.startsWith('cluster/metallb/')), files.map((f) => f.path).join(' '));
    // roles/kubernetes/control-plane/tasks/kubeadm-setup.yml apiserver_sans: "{{ kube_vip_address }}".
    assert.ok(computeSans(inv).some((s) => s.value === '10.42.42.42'));
  });

  test('7. settings honoured: docker_image_repo, pod name, requests, config dirs, pull policy, keepalive timeout', () => {
    const vars = {
      // roles/kubespray_defaults/defaults/main/download.yml: nginx_image_repo: "{{ docker_image_repo }}/library/nginx".
      docker_image_repo: 'registry.local:5000',
      // roles/kubernetes/node/defaults/main.yml and templates/manifests/nginx-proxy.manifest.j2.
      loadbalancer_apiserver_pod_name: 'apiserver-lb',
      loadbalancer_apiserver_cpu_requests: '50m',
      loadbalancer_apiserver_memory_requests: '64M',
      loadbalancer_apiserver_keepalive_timeout: '3m',
      loadbalancer_apiserver_healthcheck_port: 8081,
      // roles/kubespray_defaults/defaults/main/main.yml: nginx_config_dir, haproxy_config_dir, k8s_image_pull_policy.
      nginx_config_dir: '/etc/kubernetes/nginx',
      k8s_image_pull_policy: 'Always',
    };
    const files = renderPlan(build(yamlInventory(vars)));
    const pod = parseYaml(file(files, 'nodes/w1/etc/kubernetes/manifests/nginx-proxy.yml')) as {
      metadata: { name: string };
      spec: {
        containers: { name: string; image: string; imagePullPolicy: string; resources: { requests: Record<string, string> } }[];
        volumes: { hostPath: { path: string } }[];
      };
    };
    assert.equal(pod.metadata.name, 'apiserver-lb');
    assert.equal(pod.spec.containers[0]!.name, 'nginx-proxy');
    assert.equal(pod.spec.containers[0]!.image, 'registry.local:5000/library/nginx:1.30.1-alpine');
    assert.equal(pod.spec.containers[0]!.imagePullPolicy, 'Always');
    assert.deepEqual(pod.spec.containers[0]!.resources.requests, { cpu: '50m', memory: '64M' });
    assert.equal(pod.spec.volumes[0]!.hostPath.path, '/etc/kubernetes/nginx');
    // roles/kubernetes/node/templates/loadbalancer/nginx.conf.j2: keepalive_timeout {{ loadbalancer_apiserver_keepalive_timeout }}.
    assert.match(file(files, 'nodes/w1/etc/kubernetes/nginx/nginx.conf'), /keepalive_timeout 3m;/);
    const haproxy = renderPlan(
      build(
        yamlInventory({
          ...vars,
          loadbalancer_apiserver_type: 'haproxy',
          haproxy_config_dir: '/etc/kubernetes/haproxy',
          loadbalancer_apiserver_pod_name: undefined,
        }),
      ),
    );
    // roles/kubernetes/node/templates/loadbalancer/haproxy.cfg.j2: timeout client {{ loadbalancer_apiserver_keepalive_timeout }}.
    assert.match(file(haproxy, 'nodes/w1/etc/kubernetes/haproxy/haproxy.cfg'), /timeout client 3m/);
    assert.match(file(haproxy, 'nodes/w1/etc/kubernetes/manifests/haproxy.yml'), /image: "registry\.local:5000\/library\/haproxy:3\.2\.19-alpine"/);
  });

  test('8. kube-proxy with the local LB uses https://127.0.0.1:<kube_apiserver_port> on every node', () => {
    const p = planEndpoints(build(yamlInventory({ kube_apiserver_port: 7443, loadbalancer_apiserver_port: 7443 })));
    // roles/kubernetes/kubeadm/tasks/main.yml: sed 's#server:.*#server: https://127.0.0.1:{{ kube_apiserver_port }}#g'.
    for (const n of ['cp1', 'w1']) assert.equal(url(p, n, 'kube-proxy'), 'https://127.0.0.1:7443');
  });

  test('9. SANs say which entries kubespray adds from facts', () => {
    const files = renderPlan(build(yamlInventory({})));
    // roles/kubernetes/control-plane/tasks/kubeadm-setup.yml: ansible_default_ipv4/ipv6 address, ansible_hostname, ansible_fqdn.
    for (const f of ['cluster/apiserver-sans.txt', 'cluster/apiserver-sans.cnf', 'cluster/kubeadm-certsans.yaml']) {
      assert.match(file(files, f), /^# {3}cp1: ansible_default_ipv4\.address, ansible_default_ipv6\.address, ansible_hostname, ansible_fqdn$/m, f);
    }
  });

  test('10. the kube_apiserver_global_endpoint row for each layout', () => {
    // roles/kubespray_defaults/defaults/main/main.yml kube_apiserver_global_endpoint.
    assert.equal(planEndpoints(build(yamlInventory({ loadbalancer_apiserver_port: 7443 }))).global.url, 'https://localhost:7443');
    // v2.29.0: localhost only when loadbalancer_apiserver_port is kube_apiserver_port, else the first control plane.
    assert.equal(planEndpoints(build(yamlInventory({ loadbalancer_apiserver_port: 7443 }), { kubespray: '2.29' })).global.url, 'https://10.0.0.11:6443');
    assert.equal(planEndpoints(build(yamlInventory({ loadbalancer_apiserver_localhost: false }))).global.url, 'https://10.0.0.11:6443');
    assert.match(renderPlan(build(yamlInventory({})))[0]!.content, /^cluster-wide \(kube_apiserver_global_endpoint.*\): https:\/\/localhost:6443/m);
  });
});

describe('the MetalLB layout', () => {
  const metallb = {
    kubeward_vip_provider: 'metallb',
    loadbalancer_apiserver: { address: '10.0.0.200', port: 6443 },
    kubeward_metallb_load_balancer_class: 'metallb.io/metallb',
    kubeward_metallb_address_pool: 'apiserver',
  };

  test('is the default for a MetalLB VIP: nodes on the node-local LB, a Service for outside clients, the VIP in the certificate', () => {
    const inv = build(yamlInventory(metallb));
    assert.equal(inv.localLb, true);
    const p = planEndpoints(inv);
    assert.equal(url(p, 'w1', 'kubelet'), 'https://localhost:6443');
    assert.ok(p.nodes.find((n) => n.name === 'w1')?.localLb, 'workers run the node-local LB');
    assert.equal(p.external.url, 'https://10.0.0.200:6443');
    assert.match(
      p.warnings.join('\n'),
      /kube_proxy_strict_arp: true/,
      'roles/kubespray_defaults/defaults/main/main.yml: kube_proxy_mode ipvs; strict ARP is off by default',
    );
    const files = renderPlan(inv);
    const svc = file(files, 'cluster/metallb/apiserver-service.yaml');
    assert.match(svc, /^# Prerequisites:$/m);
    assert.match(svc, /IPAddressPool \(apiserver/);
    assert.match(svc, /layer-2 mode needs kube_proxy_strict_arp: true/);
    const doc = parseYaml(svc) as { spec: { loadBalancerClass: string; ports: { port: number }[] }; metadata: { annotations: Record<string, string> } };
    assert.equal(doc.spec.loadBalancerClass, 'metallb.io/metallb');
    assert.equal(doc.metadata.annotations['metallb.io/loadBalancerIPs'], '10.0.0.200');
    assert.ok(!files.some((f) => f.path.startsWith('cluster/external-lb/')), 'no HAProxy for a MetalLB VIP');
    assert.ok(computeSans(inv).some((s) => s.value === '10.0.0.200'));
  });

  test('routing nodes through a MetalLB VIP is warned as a bootstrap cycle', () => {
    const p = planEndpoints(build(yamlInventory({ ...metallb, loadbalancer_apiserver_localhost: false, kube_proxy_strict_arp: true })));
    assert.match(p.warnings.join('\n'), /bootstrap cycle/);
    assert.equal(url(p, 'w1', 'kubelet'), 'https://10.0.0.200:6443');
  });

  test("kubespray's own combination (loadbalancer_apiserver + loadbalancer_apiserver_localhost: true) is accepted and warns on a port mismatch", () => {
    const inv = build(yamlInventory({ loadbalancer_apiserver: { address: '10.0.0.200', port: 8443 }, loadbalancer_apiserver_localhost: true }));
    const p = planEndpoints(inv);
    // roles/kubespray_defaults/defaults/main/main.yml: apiserver_loadbalancer_domain_name is localhost, the port loadbalancer_apiserver.port.
    assert.equal(url(p, 'w1', 'kubelet'), 'https://localhost:8443');
    assert.match(p.warnings.join('\n'), /nodes dial https:\/\/localhost:8443, but the node-local load balancer listens on 6443/);
  });
});
