// Turns a raw inventory (any of the three formats) plus group-vars files into the typed Inventory,
// applying kubespray's defaults and collecting every problem, each naming the host and the field.
import { LB_TYPES, type Inventory, type InventoryHost, type LbType } from './inventory.ts';
import { CLUSTER_VARS, HOST_VARS, VarReader, likelyMeant, resolveSimpleTemplates } from './inventory-vars.ts';
import { isDnsName, isHostName, isPlainIp, isSafeAbsolutePath, shown } from './value-grammar.ts';
import type { InventoryProblem, RawInventory, Vars } from './raw-inventory.ts';
import { firstServiceIp } from './service-ip.ts';

/** Group names kubespray uses, old spellings mapped to the current ones. */
const GROUP_ALIASES: Record<string, string> = {
  all: 'all', ungrouped: 'ungrouped', bastion: 'bastion',
  kube_control_plane: 'kube_control_plane', 'kube-master': 'kube_control_plane', kube_master: 'kube_control_plane',
  etcd: 'etcd', kube_node: 'kube_node', 'kube-node': 'kube_node',
  k8s_cluster: 'k8s_cluster', 'k8s-cluster': 'k8s_cluster', calico_rr: 'calico_rr', 'calico-rr': 'calico_rr',
};
const KNOWN_GROUPS = 'kube_control_plane (or kube-master), etcd, kube_node (or kube-node), k8s_cluster, calico_rr, bastion, all';
const ALL_KNOWN = new Set<string>([...CLUSTER_VARS, ...HOST_VARS]);
/** kubespray variables one edit away from a known name that are legitimate and simply not read here. */
const NOT_TYPOS = new Set(['ip6', 'access_ip6', 'main_ip', 'main_access_ip', 'kube_apiserver_ip', 'ansible_port', 'ansible_user']);

export type BuildResult = { ok: true; inventory: Inventory; ignoredHosts: string[] } | { ok: false; problems: InventoryProblem[] };

/** extraVars: group-vars files in order (later wins), on top of the inventory's own vars. */
export function buildInventory(raw: RawInventory, extraVars: Vars[] = []): BuildResult {
  const problems: InventoryProblem[] = [...raw.problems];
  const members = resolveGroups(raw, problems);
  const groupVars = (g: string) => raw.groups.filter((x) => GROUP_ALIASES[x.name] === g).map((x) => x.vars);
  const merged: Vars = Object.assign({}, ...groupVars('all'), ...groupVars('k8s_cluster'), raw.vars, ...extraVars);
  checkUnknownVars(merged, [...CLUSTER_VARS, ...HOST_VARS], problems);
  const cluster = new VarReader(resolveSimpleTemplates(merged, ALL_KNOWN, problems));
  const settings = readClusterSettings(cluster);
  problems.push(...cluster.problems);

  const inRole = (name: string) => ['kube_control_plane', 'etcd', 'kube_node'].some((g) => members.get(g)?.has(name));
  const hosts: InventoryHost[] = [];
  for (const rh of raw.hosts.filter((h) => inRole(h.name))) {
    const vars: Vars = Object.assign({}, ...hostGroupVars(raw, rh.name, members), rh.vars);
    const host = readHost(rh.name, vars, settings.bindAddress, members, problems);
    if (host) hosts.push(host);
  }
  checkHostSet(hosts, members, problems);
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, inventory: { ...settings.inventory, hosts }, ignoredHosts: raw.hosts.filter((h) => !inRole(h.name)).map((h) => h.name) };
}

function resolveGroups(raw: RawInventory, problems: InventoryProblem[]): Map<string, Set<string>> {
  const byName = new Map(raw.groups.map((g) => [g.name, g]));
  for (const g of raw.groups) {
    if (GROUP_ALIASES[g.name] === undefined) {
      problems.push({ group: g.name, field: 'group', message: `unknown group; kubeward plan reads ${KNOWN_GROUPS}`, where: g.where });
    }
    for (const h of g.hosts) {
      if (!raw.hosts.some((x) => x.name === h)) problems.push({ host: h, group: g.name, field: 'hosts', message: `listed in group "${g.name}" but not defined under hosts`, where: g.where });
    }
  }
  const expand = (name: string, seen: Set<string>): string[] => {
    const g = byName.get(name);
    if (!g || seen.has(name)) return [];
    seen.add(name);
    return [...g.hosts, ...g.children.flatMap((c) => expand(c, seen))];
  };
  const members = new Map<string, Set<string>>();
  for (const g of raw.groups) {
    const canonical = GROUP_ALIASES[g.name];
    if (canonical === undefined) continue;
    const set = members.get(canonical) ?? new Set<string>();
    for (const h of expand(g.name, new Set())) set.add(h);
    members.set(canonical, set);
  }
  return members;
}

function hostGroupVars(raw: RawInventory, host: string, members: Map<string, Set<string>>): Vars[] {
  return raw.groups
    .filter((g) => !['all', 'k8s_cluster'].includes(GROUP_ALIASES[g.name] ?? '') && members.get(GROUP_ALIASES[g.name] ?? '')?.has(host))
    .map((g) => g.vars);
}

function checkUnknownVars(vars: Vars, known: readonly string[], problems: InventoryProblem[], host?: string): void {
  for (const key of Object.keys(vars)) {
    if (known.includes(key) || NOT_TYPOS.has(key)) continue;
    // kubespray has hundreds of other variables; pasted group vars keep them, so only near-misses are errors.
    const meant = likelyMeant(key, known);
    if (meant) problems.push({ host, field: key, message: `unknown variable; did you mean ${meant}?` });
  }
}

interface ClusterSettings {
  inventory: Omit<Inventory, 'hosts'>;
  bindAddress: string;
}

function readClusterSettings(v: VarReader): ClusterSettings {
  const apiserverPort = v.port('kube_apiserver_port') ?? 6443;
  const external = readExternalLb(v, apiserverPort);
  const localLb = v.bool('loadbalancer_apiserver_localhost') ?? external === undefined;
  if (external && localLb) {
    v.problem('loadbalancer_apiserver_localhost', 'true together with loadbalancer_apiserver: kubespray treats them as mutually exclusive; remove one');
  }
  const lbTypeText = v.string('loadbalancer_apiserver_type') ?? 'nginx';
  if (!LB_TYPES.includes(lbTypeText as LbType)) v.problem('loadbalancer_apiserver_type', `"${lbTypeText}" is not one of ${LB_TYPES.join(', ')}`);
  const clusterName = v.matching('cluster_name', isHostName, 'a DNS domain (letters, digits, "-" and ".")') ?? 'cluster.local';
  const ipv4 = v.bool('ipv4_stack') ?? true;
  const ipv6 = v.bool('ipv6_stack') ?? v.bool('enable_dual_stack_networks') ?? false;
  const serviceVar = ipv4 ? 'kube_service_addresses' : 'kube_service_addresses_ipv6';
  const serviceCidr = v.string(serviceVar) ?? (ipv4 ? '10.233.0.0/18' : 'fd85:ee78:d8a6:8607::1000/116');
  if (firstServiceIp(serviceCidr) === undefined) v.problem(serviceVar, `"${serviceCidr}" is not a CIDR like 10.233.0.0/18`);
  const supplementary = v.stringList('supplementary_addresses_in_ssl_keys');
  for (const s of supplementary) if (!isPlainIp(s) && !isDnsName(s)) v.problem('supplementary_addresses_in_ssl_keys', `${shown(s)} is neither an IP address nor a DNS name`);
  const certDir = v.path('kube_cert_dir') ?? '/etc/kubernetes/ssl';
  const caFile = v.string('kubeward_healthcheck_ca_file');
  if (caFile !== undefined && caFile !== '' && !isSafeAbsolutePath(caFile)) v.problem('kubeward_healthcheck_ca_file', `${shown(caFile)} is not an absolute path without whitespace, control characters, quotes, braces, ";", "#" or ".." segments (or "" for unverified checks)`);
  const bindAddress = v.ip('kube_apiserver_bind_address') ?? '::';
  const image = (name: string, repo: string, tag: string) => `${v.imageRepo(`${name}_image_repo`) ?? repo}:${v.imageTag(`${name}_image_tag`) ?? tag}`;
  const lbName = v.string('apiserver_loadbalancer_domain_name');
  if (lbName !== undefined && !isPlainIp(lbName) && !isHostName(lbName)) v.problem('apiserver_loadbalancer_domain_name', `${shown(lbName)} is neither a DNS name (letters, digits, "-" and ".") nor an IP address`);
  return {
    bindAddress,
    inventory: {
      externalLb: external,
      lbDomainName: lbName !== undefined && (isPlainIp(lbName) || isHostName(lbName)) ? lbName : 'lb-apiserver.kubernetes.local',
      localLb,
      lbType: lbTypeText as LbType,
      localLbPort: v.port('loadbalancer_apiserver_port') ?? v.port('nginx_kube_apiserver_port') ?? apiserverPort,
      localLbHealthcheckPort: v.port('loadbalancer_apiserver_healthcheck_port'),
      apiserverPort,
      apiserverInsecurePort: v.port('kube_apiserver_insecure_port', { allowZero: true }) ?? 0,
      etcdMultiaccess: v.bool('etcd_multiaccess') ?? true,
      supplementaryAddresses: supplementary,
      clusterName,
      dnsDomain: v.matching('dns_domain', isHostName, 'a DNS domain (letters, digits, "-" and ".")') ?? clusterName,
      serviceCidr,
      kubeVipAddress: v.ip('kube_vip_address'),
      ipv6Stack: ipv6,
      certDir,
      etcdCertDir: v.path('etcd_cert_dir') ?? '/etc/ssl/etcd/ssl',
      healthcheckCaFile: caFile === undefined ? `${certDir}/ca.crt` : caFile === '' || isSafeAbsolutePath(caFile) ? caFile : '',
      populateHostsFile: v.bool('populate_inventory_to_hosts_file') ?? true,
      images: {
        nginx: image('nginx', 'docker.io/library/nginx', '1.30.1-alpine'),
        haproxy: image('haproxy', 'docker.io/library/haproxy', '3.2.19-alpine'),
        kubeward: image('kubeward', 'kubeward', 'latest'),
      },
    },
  };
}

function readExternalLb(v: VarReader, apiserverPort: number): Inventory['externalLb'] {
  if (!v.has('loadbalancer_apiserver')) return undefined;
  const lb = v.raw('loadbalancer_apiserver');
  if (typeof lb !== 'object' || lb === null || Array.isArray(lb)) {
    v.problem('loadbalancer_apiserver', 'expected a mapping like {address: 10.0.0.100, port: 8383}');
    return undefined;
  }
  const { address, port, ...rest } = lb as Record<string, unknown>;
  for (const k of Object.keys(rest)) v.problem(`loadbalancer_apiserver.${k}`, 'unknown key; the keys are address and port');
  if (address !== undefined && !isPlainIp(String(address))) v.problem('loadbalancer_apiserver.address', `${shown(address)} is not an IP address (it goes into /etc/hosts)`);
  return {
    address: address === undefined ? undefined : String(address),
    port: v.port('loadbalancer_apiserver.port', { value: port }) ?? apiserverPort,
  };
}

function readHost(name: string, vars: Vars, clusterBind: string, members: Map<string, Set<string>>, problems: InventoryProblem[]): InventoryHost | undefined {
  for (const key of Object.keys(vars)) {
    if ((CLUSTER_VARS as readonly string[]).includes(key)) problems.push({ host: name, field: key, message: 'is cluster-wide in kubeward plan; set it once under vars (or group_vars/all)' });
  }
  checkUnknownVars(vars, [...HOST_VARS, ...CLUSTER_VARS], problems, name);
  const v = new VarReader(resolveSimpleTemplates(vars, ALL_KNOWN, problems, name), name);
  // kubespray falls back to the gathered default address; without facts, ansible_host is the next best.
  const ansibleHost = v.string('ansible_host');
  const ip = v.has('ip') ? v.ip('ip') : ansibleHost !== undefined && isPlainIp(ansibleHost) ? ansibleHost : undefined;
  if (!v.has('ip') && ip === undefined && !problems.some((p) => p.host === name && p.field === 'ip')) v.problem('ip', 'missing; add ip: <the node address other nodes reach> (ansible_host is used only when it is an IP address)');
  const accessIp = v.ip('access_ip');
  const override = v.matching('kube_override_hostname', isHostName, 'an RFC 1123 host name (letters, digits, "-" and "."); it is the node name and a certificate SAN');
  const controlPlane = members.get('kube_control_plane')?.has(name) ?? false;
  // Every host name becomes a directory under --out and a word in configs; control-plane names also a SAN.
  if (!isHostName(name)) v.problem('name', `${shown(name)} is not an RFC 1123 host name (letters, digits, "-" and "."); rename the host in the inventory`);
  problems.push(...v.problems);
  if (ip === undefined) return undefined;
  return {
    name,
    ip,
    accessIp: accessIp ?? ip,
    hasAccessIp: accessIp !== undefined,
    apiserverBindAddress: v.ip('kube_apiserver_bind_address') ?? clusterBind,
    overrideHostname: override,
    controlPlane,
    etcd: members.get('etcd')?.has(name) ?? false,
    worker: members.get('kube_node')?.has(name) ?? false,
  };
}

function checkHostSet(hosts: InventoryHost[], members: Map<string, Set<string>>, problems: InventoryProblem[]): void {
  if ((members.get('kube_control_plane')?.size ?? 0) === 0) {
    problems.push({ group: 'kube_control_plane', field: 'hosts', message: 'no control-plane hosts; list at least one host in kube_control_plane' });
  }
  const byIp = new Map<string, string>();
  for (const h of hosts) {
    const other = byIp.get(h.ip);
    if (other !== undefined) problems.push({ host: h.name, field: 'ip', message: `${h.ip} is also the ip of host "${other}"; each host needs its own address` });
    else byIp.set(h.ip, h.name);
  }
}
