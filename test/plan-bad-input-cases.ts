// The bad inputs for `kubeward plan` and `kubeward check-cert`: what each one is, the
// command line, and what the one line of the error must say. Used by plan-bad-input.test.ts.
import { join } from 'node:path';

const ROOT = new URL('..', import.meta.url).pathname;
const GOOD = join(ROOT, 'examples/inventory/local-nginx.yaml');

export interface Case {
  name: string;
  /** Files to create in the case's directory: name → content. */
  files?: Record<string, string>;
  /**
   * Arguments; "@x" is replaced by the path of file x, "@out" by an empty output directory,
   * "@deepout" by one three levels down (so ../../../../x would land in the case's own directory),
   * "@trap" by one whose nodes/ is a symlink to a directory outside it.
   */
  args: string[];
  /** What the one line must contain (host and key, or the flag). */
  expect: RegExp;
  /** Problems the input has by construction (default 1): the number of stderr lines. */
  lines?: number;
}

const yamlInv = (hosts: Record<string, unknown>, vars: Record<string, unknown> = {}, workers?: string[]) =>
  JSON.stringify({ hosts, groups: { kube_control_plane: ['cp1'], etcd: ['cp1'], kube_node: workers ?? Object.keys(hosts).filter((h) => h !== 'cp1') }, vars });
const cp = { ip: '10.0.0.11' };
const w = { ip: '10.0.0.21' };
const withVars = (vars: Record<string, unknown>) => yamlInv({ cp1: cp, w1: w }, vars);

export const PLAN_CASES: Case[] = [
  {
    name: 'worker named ../../../../escaped (INI)',
    files: { 'i.ini': '[kube_control_plane]\ncp1 ip=10.0.0.11\n[kube_node]\n../../../../escaped ip=10.0.0.21\n' },
    args: ['plan', 'render', '--inventory', '@i.ini', '--out', '@deepout'],
    expect: /host "\.\.\/\.\.\/\.\.\/\.\.\/escaped": name: .*RFC 1123/,
  },
  {
    name: 'worker name with a line break',
    files: { 'i.yaml': yamlInv({ cp1: cp, 'w1\n203.0.113.66 evil': w }) },
    args: ['plan', 'render', '--inventory', '@i.yaml', '--out', '@out'],
    expect: /host "w1\\n203\.0\.113\.66 evil": name:/,
  },
  {
    name: 'worker name with a space',
    files: { 'i.yaml': yamlInv({ cp1: cp, 'w 1': w }) },
    args: ['plan', 'endpoints', '--inventory', '@i.yaml'],
    expect: /host "w 1": name:/,
  },
  {
    name: 'dns_domain with an /etc/hosts line',
    files: { 'i.yaml': withVars({ dns_domain: 'cluster.local\n203.0.113.66 registry' }) },
    args: ['plan', 'render', '--inventory', '@i.yaml', '--out', '@out'],
    expect: /dns_domain: "cluster\.local\\n203/,
  },
  {
    name: 'LB domain name with an nginx http block',
    files: {
      'i.yaml': withVars({
        loadbalancer_apiserver: { address: '10.0.0.100', port: 8383 },
        apiserver_loadbalancer_domain_name: 'a;\nhttp { root /; autoindex on; }',
      }),
    },
    args: ['plan', 'render', '--inventory', '@i.yaml', '--out', '@out'],
    expect: /apiserver_loadbalancer_domain_name: .*neither a DNS name/,
  },
  {
    name: 'CA file path with a rogue HAProxy server',
    files: { 'i.yaml': withVars({ loadbalancer_apiserver_type: 'haproxy', kubeward_healthcheck_ca_file: '/ca.crt\n  server rogue 203.0.113.66:6443' }) },
    args: ['plan', 'render', '--inventory', '@i.yaml', '--out', '@out'],
    expect: /kubeward_healthcheck_ca_file: /,
  },
  {
    name: 'image tag making the static pod privileged',
    files: { 'i.yaml': withVars({ nginx_image_tag: 'x\n      securityContext: {privileged: true}' }) },
    args: ['plan', 'render', '--inventory', '@i.yaml', '--out', '@out'],
    expect: /nginx_image_tag: .*image tag/,
  },
  {
    name: 'image repo with upper case and a space',
    files: { 'i.yaml': withVars({ haproxy_image_repo: 'Docker.io/Library Haproxy' }) },
    args: ['plan', 'render', '--inventory', '@i.yaml', '--out', '@out'],
    expect: /haproxy_image_repo: .*OCI reference/,
  },
  {
    name: 'relative kube_cert_dir',
    files: { 'i.yaml': withVars({ kube_cert_dir: 'etc/kubernetes/ssl' }) },
    args: ['plan', 'sans', '--inventory', '@i.yaml'],
    expect: /kube_cert_dir: "etc\/kubernetes\/ssl" is not an absolute path/,
  },
  {
    name: 'etcd_cert_dir with ..',
    files: { 'i.yaml': withVars({ etcd_cert_dir: '/etc/ssl/../../root' }) },
    args: ['plan', 'render', '--inventory', '@i.yaml', '--out', '@out'],
    expect: /etcd_cert_dir: /,
  },
  {
    name: 'kube_override_hostname with an openssl SAN line',
    files: { 'i.yaml': yamlInv({ cp1: { ip: '10.0.0.11', kube_override_hostname: 'cp1\nDNS.99 = evil' }, w1: w }) },
    args: ['plan', 'sans', '--inventory', '@i.yaml', '--format', 'openssl'],
    expect: /host "cp1": kube_override_hostname: /,
  },
  {
    name: 'cluster_name with a line break',
    files: { 'i.yaml': withVars({ cluster_name: 'a\nIP.9 = 1.2.3.4' }) },
    args: ['plan', 'sans', '--inventory', '@i.yaml'],
    expect: /cluster_name: /,
  },
  {
    name: 'supplementary address with a line break',
    files: { 'i.yaml': withVars({ supplementary_addresses_in_ssl_keys: ['ok.example.com', 'x\nDNS.7 = evil'] }) },
    args: ['plan', 'sans', '--inventory', '@i.yaml'],
    expect: /supplementary_addresses_in_ssl_keys: "x\\nDNS/,
  },
  {
    name: 'ip that is not an address',
    files: { 'i.yaml': yamlInv({ cp1: cp, w1: { ip: '10.0.0.300' } }) },
    args: ['plan', 'endpoints', '--inventory', '@i.yaml'],
    expect: /host "w1": ip: "10\.0\.0\.300" is not an IPv4 or IPv6 address/,
  },
  {
    name: 'ip with a zone id',
    files: { 'i.yaml': yamlInv({ cp1: cp, w1: { ip: 'fe80::1%eth0' } }) },
    args: ['plan', 'endpoints', '--inventory', '@i.yaml'],
    expect: /host "w1": ip: /,
  },
  {
    name: 'external LB address that is a name',
    files: { 'i.yaml': withVars({ loadbalancer_apiserver: { address: 'lb.example.com', port: 8383 } }) },
    args: ['plan', 'endpoints', '--inventory', '@i.yaml'],
    expect: /loadbalancer_apiserver\.address: "lb\.example\.com" is not an IP address/,
  },
  {
    name: 'port out of range',
    files: { 'i.ini': '[kube_control_plane]\ncp1 ip=10.0.0.11\n[all:vars]\nkube_apiserver_port=99999\n' },
    args: ['plan', 'endpoints', '--inventory', '@i.ini'],
    expect: /kube_apiserver_port: port 99999 is out of range/,
  },
  {
    name: 'unknown LB type',
    files: { 'i.yaml': withVars({ loadbalancer_apiserver_type: 'envoy' }) },
    args: ['plan', 'render', '--inventory', '@i.yaml', '--out', '@out'],
    expect: /loadbalancer_apiserver_type: "envoy" is not one of/,
  },
  {
    name: 'YAML syntax error',
    files: { 'i.yaml': 'hosts:\n  cp1: {ip: 10.0.0.11\n' },
    args: ['plan', 'endpoints', '--inventory', '@i.yaml'],
    expect: /yaml: .*is not valid YAML/,
  },
  {
    name: 'YAML alias without anchor',
    files: { 'i.yaml': 'hosts: *nope\n' },
    args: ['plan', 'endpoints', '--inventory', '@i.yaml'],
    expect: /yaml: .*is not valid YAML/,
  },
  { name: 'empty inventory', files: { 'i.yaml': '' }, args: ['plan', 'endpoints', '--inventory', '@i.yaml'], expect: /hosts: .* is empty/ },
  {
    name: 'inventory that is a list',
    files: { 'i.yaml': '- a\n- b\n' },
    args: ['plan', 'endpoints', '--inventory', '@i.yaml'],
    expect: /yaml: .*top level must be a mapping/,
  },
  {
    name: 'unreadable inventory',
    args: ['plan', 'sans', '--inventory', '/nonexistent/hosts.yaml'],
    expect: /--inventory \/nonexistent\/hosts\.yaml: cannot read the file/,
  },
  {
    name: '--vars that is not YAML',
    files: { 'v.yml': 'a: [\n' },
    args: ['plan', 'endpoints', '--inventory', GOOD, '--vars', '@v.yml'],
    expect: /vars: .*v\.yml is not valid YAML/,
  },
  {
    name: '--vars that is a list',
    files: { 'v.yml': '- a\n' },
    args: ['plan', 'endpoints', '--inventory', GOOD, '--vars', '@v.yml'],
    expect: /vars: .*must be a mapping/,
  },
  {
    name: 'ip from an Ansible fact',
    files: { 'i.yaml': yamlInv({ cp1: cp, w1: { ip: '{{ ansible_default_ipv4.address }}' } }) },
    args: ['plan', 'endpoints', '--inventory', '@i.yaml'],
    expect: /host "w1": ip: .*ansible_default_ipv4/,
  },
  {
    name: '--out with a symlink leading outside',
    files: { 'i.yaml': withVars({}) },
    args: ['plan', 'render', '--inventory', '@i.yaml', '--out', '@trap'],
    expect: /--out .*leads outside the directory/,
  },
  { name: 'unknown flag', args: ['plan', 'render', '--inventory', GOOD, '--out', '/tmp/x', '--bogus'], expect: /unknown option '--bogus'/ },
  { name: 'bad output format', args: ['plan', 'endpoints', '--inventory', GOOD, '-o', 'xml'], expect: /output.*expected table, json or yaml/ },
  {
    name: 'unknown kubespray version',
    args: ['plan', 'endpoints', '--inventory', GOOD, '--kubespray-version', '3.0'],
    expect: /kubesprayVersion|kubespray-version.*expected a kubespray release/,
  },
  {
    name: 'Jinja statement in a read variable',
    files: { 'i.yaml': withVars({ kube_cert_dir: '{% if true %}/x{% endif %}' }) },
    args: ['plan', 'render', '--inventory', '@i.yaml', '--out', '@out'],
    expect: /kube_cert_dir: .*Jinja statements/,
  },
  {
    name: 'variable that refers to itself',
    files: { 'i.yaml': withVars({ kube_config_dir: '{{ kube_cert_dir }}', kube_cert_dir: '{{ kube_config_dir }}/ssl' }) },
    args: ['plan', 'sans', '--inventory', '@i.yaml'],
    expect: /kube_cert_dir: .*refers to itself/,
    lines: 2,
  },
  {
    name: 'pull policy not in the enum',
    files: { 'i.yaml': withVars({ k8s_image_pull_policy: 'Sometimes' }) },
    args: ['plan', 'render', '--inventory', '@i.yaml', '--out', '@out'],
    expect: /k8s_image_pull_policy: "Sometimes" is not one of Always, IfNotPresent, Never/,
  },
  {
    name: 'CPU request that is not a quantity',
    files: { 'i.yaml': withVars({ loadbalancer_apiserver_cpu_requests: '25m\n  limits: {}' }) },
    args: ['plan', 'render', '--inventory', '@i.yaml', '--out', '@out'],
    expect: /loadbalancer_apiserver_cpu_requests: /,
  },
  {
    name: 'pod name with upper case',
    files: { 'i.yaml': withVars({ loadbalancer_apiserver_pod_name: 'Nginx Proxy' }) },
    args: ['plan', 'render', '--inventory', '@i.yaml', '--out', '@out'],
    expect: /loadbalancer_apiserver_pod_name: /,
  },
  {
    name: 'config dir with traversal',
    files: { 'i.yaml': withVars({ nginx_config_dir: '/etc/../../root' }) },
    args: ['plan', 'render', '--inventory', '@i.yaml', '--out', '@out'],
    expect: /nginx_config_dir: /,
  },
  {
    name: 'unknown VIP provider',
    files: { 'i.yaml': withVars({ loadbalancer_apiserver: { address: '10.0.0.100' }, kubeward_vip_provider: 'f5' }) },
    args: ['plan', 'render', '--inventory', '@i.yaml', '--out', '@out'],
    expect: /kubeward_vip_provider: "f5" is not one of external, metallb, kube-vip/,
  },
  {
    name: 'IPv6-only host with an IPv4 ip6',
    files: { 'i.yaml': yamlInv({ cp1: { ip6: '10.0.0.11' }, w1: { ip6: 'fd00::21' } }, { ipv4_stack: false, ipv6_stack: true }) },
    args: ['plan', 'endpoints', '--inventory', '@i.yaml'],
    expect: /host "cp1": ip6: "10\.0\.0\.11" is not an IPv6 address/,
  },
  { name: '--node not in the inventory', args: ['plan', 'endpoints', '--inventory', GOOD, '--node', 'nope'], expect: /--node nope: not a cluster node/ },
];

export const CHECK_CERT_CASES: Case[] = [
  { name: 'no URL and no inventory', args: ['check-cert'], expect: /give a URL .* or --inventory FILE/ },
  { name: 'URL and inventory together', args: ['check-cert', 'https://127.0.0.1:6443', '--inventory', GOOD], expect: /either a URL or --inventory, not both/ },
  { name: 'http URL', args: ['check-cert', 'http://127.0.0.1:6443'], expect: /only https:\/\/ servers have certificates/ },
  { name: 'not a URL', args: ['check-cert', 'https://exa mple.com:6443'], expect: /not a URL/ },
  { name: 'bad timeout', args: ['check-cert', 'https://127.0.0.1:6443', '--timeout', 'soon'], expect: /timeout/ },
  {
    name: 'missing CA file',
    args: ['check-cert', 'https://127.0.0.1:6443', '--ca-file', '/nonexistent/ca.crt'],
    expect: /--ca-file \/nonexistent\/ca\.crt: cannot read the file/,
  },
  { name: '--ip that is not an address', args: ['check-cert', 'https://127.0.0.1:6443', '--ip', 'ten.0.0.1'], expect: /ip/ },
  {
    name: 'inventory with a traversal worker',
    files: { 'i.ini': '[kube_control_plane]\ncp1 ip=10.0.0.11\n[kube_node]\n../escaped ip=10.0.0.21\n' },
    args: ['check-cert', '--inventory', '@i.ini'],
    expect: /host "\.\.\/escaped": name:/,
  },
  {
    name: 'inventory with a bad override hostname',
    files: { 'i.yaml': yamlInv({ cp1: { ip: '10.0.0.11', kube_override_hostname: 'a b' }, w1: w }) },
    args: ['check-cert', '--inventory', '@i.yaml'],
    expect: /host "cp1": kube_override_hostname:/,
  },
];
