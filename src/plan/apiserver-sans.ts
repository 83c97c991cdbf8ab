// The apiserver certificate's subject alternative names: every name and address a client may dial,
// in kubespray's order (roles/kubernetes/control-plane/tasks/kubeadm-setup.yml, apiserver_sans),
// plus custom bind addresses; and the openssl and kubeadm forms of the list.
import { isIP } from 'node:net';
import { controlPlaneHosts, type Inventory } from './inventory.ts';
import { isWildcardBind } from './plan-endpoints.ts';
import { canonicalIp } from '../base/ip.ts';
import { firstServiceIp } from './service-ip.ts';

export interface SanEntry {
  kind: 'dns' | 'ip';
  value: string;
  /** Who dials it. */
  why: string;
}

export function computeSans(inv: Inventory): SanEntry[] {
  const out: SanEntry[] = [];
  const seen = new Set<string>();
  const add = (value: string | undefined, why: string) => {
    if (value === undefined || value === '') return;
    const kind = isIP(value) !== 0 ? 'ip' : 'dns';
    const key = kind === 'ip' ? (canonicalIp(value) ?? value) : value.toLowerCase();
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ kind, value: key, why });
  };
  for (const n of ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', `kubernetes.default.svc.${inv.dnsDomain}`])
    add(n, 'in-cluster clients (the kubernetes Service)');
  add(firstServiceIp(inv.serviceCidr), `ClusterIP of the kubernetes Service (first address of ${inv.serviceCidr})`);
  for (const n of ['localhost', '127.0.0.1', '::1']) add(n, 'node-local clients and load balancers (TLS passes through them)');
  const cps = controlPlaneHosts(inv);
  for (const h of cps) add(h.name, `control-plane host name ${h.name}`);
  add(
    inv.lbDomainName,
    `apiserver_loadbalancer_domain_name${inv.externalLb === undefined || inv.lbDomainName === 'localhost' ? '' : ' (the load balancer name)'}`,
  );
  add(inv.externalLb?.address, 'loadbalancer_apiserver.address (the VIP)');
  for (const s of inv.supplementaryAddresses) add(s, 'supplementary_addresses_in_ssl_keys');
  const [ipName, accessName] = inv.ipv4Stack ? ['ip', 'access_ip'] : ['ip6', 'access_ip6'];
  for (const h of cps) add(h.accessIp, `${h.name} ${h.hasAccessIp ? accessName : ipName} (main_access_ip)`);
  for (const h of cps) add(h.ip, `${h.name} ${h.ipSource} (main_ip)`);
  for (const h of cps) if (!isWildcardBind(h.apiserverBindAddress)) add(h.apiserverBindAddress, `${h.name} kube_apiserver_bind_address`);
  for (const h of cps) add(h.overrideHostname, `${h.name} kube_override_hostname`);
  add(inv.kubeVipAddress, 'kube_vip_address');
  return out;
}

/**
 * What kubespray adds to the SANs from Ansible facts (roles/kubernetes/control-plane/tasks/kubeadm-setup.yml:
 * ansible_default_ipv4/ipv6 address, ansible_hostname, ansible_fqdn of every control-plane host),
 * which no static tool can know: one comment line per host.
 */
export function factSanNotes(inv: Inventory): string[] {
  const cps = controlPlaneHosts(inv);
  return [
    'kubespray also adds these from Ansible facts, which kubeward cannot know (usually the names and addresses above;',
    'check with: ansible -m setup -a "filter=ansible_default_ipv*,ansible_hostname,ansible_fqdn" kube_control_plane):',
    ...cps.map((h) => `  ${h.name}: ansible_default_ipv4.address, ansible_default_ipv6.address, ansible_hostname, ansible_fqdn`),
  ];
}

const comments = (notes: string[]) => notes.map((n) => `# ${n}`);

/** An openssl `[alt_names]` section, for `subjectAltName = @alt_names`. */
export function renderOpensslSans(sans: SanEntry[], notes: string[] = []): string {
  let dns = 0;
  let ip = 0;
  const lines = sans.map((s) => (s.kind === 'dns' ? `DNS.${++dns} = ${s.value}` : `IP.${++ip} = ${s.value}`));
  return ['# kube-apiserver subjectAltName, from kubeward plan; use with subjectAltName = @alt_names', ...comments(notes), '[ alt_names ]', ...lines, ''].join(
    '\n',
  );
}

/** A kubeadm ClusterConfiguration fragment; merge it into the cluster's kubeadm config. */
export function renderKubeadmCertSans(sans: SanEntry[], notes: string[] = []): string {
  const items = sans.map((s) => `    - ${yamlScalar(s.value)}`);
  return [
    '# kube-apiserver certSANs, from kubeward plan; merge into your kubeadm ClusterConfiguration',
    ...comments(notes),
    'apiVersion: kubeadm.k8s.io/v1beta4',
    'kind: ClusterConfiguration',
    'apiServer:',
    '  certSANs:',
    ...items,
    '',
  ].join('\n');
}

/** Plain text: one SAN per line with the reason, for people and for `grep`. */
export function renderSanList(sans: SanEntry[], notes: string[] = []): string {
  const width = Math.max(...sans.map((s) => s.value.length + 4));
  return [...sans.map((s) => `${`${s.kind === 'dns' ? 'DNS' : 'IP'}:${s.value}`.padEnd(width)}  # ${s.why}`), ...comments(notes)].join('\n') + '\n';
}

/** Every YAML scalar kubeward writes is double-quoted (JSON strings are valid YAML). */
export function yamlScalar(s: string): string {
  return JSON.stringify(s);
}
