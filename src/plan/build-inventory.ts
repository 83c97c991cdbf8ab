// Turns a raw inventory (any of the three formats) plus group-vars files into the typed Inventory,
// with kubespray's defaults and precedence (role defaults < group_vars < --vars files < host vars),
// Jinja evaluated as kubespray's samples use it, and every problem naming the host and the field.
import { LB_TYPES, VIP_PROVIDERS, type Inventory, type InventoryHost, type LbType, type VipProvider } from './inventory.ts';
import { CLUSTER_VARS, HOST_VARS, VarReader, editDistance, likelyMeant } from './inventory-vars.ts';
import { hostLayers, type VarDirs } from './ansible-precedence.ts';
import { KUBEWARD_IMAGE, KUBEWARD_IMAGE_REPO } from '../manifests/kubeward-image.ts';
import { CURRENT_KUBESPRAY, KUBESPRAY_DEFAULTS, hasLocalhostLbName, type KubesprayVersion } from './kubespray-defaults.ts';
import { isDnsName, isHostName, isObjectName, isPlainIp, isSafeAbsolutePath, shown } from './value-grammar.ts';
import type { InventoryProblem, RawGroup, RawInventory, Vars } from './raw-inventory.ts';
import { firstServiceIp } from './service-ip.ts';
import { VarScope } from './var-scope.ts';
import { isIP } from 'node:net';

/** Group names kubespray reads, old spellings mapped to the current ones. Other groups are allowed. */
const GROUP_ALIASES: Record<string, string> = {
  all: 'all',
  ungrouped: 'ungrouped',
  bastion: 'bastion',
  kube_control_plane: 'kube_control_plane',
  'kube-master': 'kube_control_plane',
  kube_master: 'kube_control_plane',
  etcd: 'etcd',
  kube_node: 'kube_node',
  'kube-node': 'kube_node',
  k8s_cluster: 'k8s_cluster',
  'k8s-cluster': 'k8s_cluster',
  calico_rr: 'calico_rr',
  'calico-rr': 'calico_rr',
};
/** kubespray variables one edit away from a known name that are legitimate and simply not read here. */
const NOT_TYPOS = new Set(['main_ip', 'main_access_ip', 'kube_apiserver_ip', 'ansible_port', 'ansible_user', 'kube_vip_enabled', 'kube_proxy_mode']);

export type BuildResult = { ok: true; inventory: Inventory; ignoredHosts: string[] } | { ok: false; problems: InventoryProblem[] };

export interface BuildOptions {
  /** The kubespray release whose behaviour to follow; default: the current one. */
  kubespray?: KubesprayVersion;
}

/**
 * extraVars: the --vars files in order (later wins), above every group's variables and below the
 * host's own; dirs: group_vars/ and host_vars/ beside the inventory and the playbook, each at its
 * place in Ansible's precedence (ansible-precedence.ts).
 */
export function buildInventory(raw: RawInventory, extraVars: Vars[] = [], opts: BuildOptions = {}, dirs: Omit<VarDirs, 'extra'> = {}): BuildResult {
  const version = opts.kubespray ?? CURRENT_KUBESPRAY;
  const problems: InventoryProblem[] = [...raw.problems];
  const members = resolveGroups(raw, problems);
  const rawMembers = rawMembership(raw);
  const clusterGroups = clusterGroupNames(raw, rawMembers);
  const varDirs: VarDirs = { ...dirs, extra: extraVars };
  const clusterLayers = hostLayers(raw, undefined, clusterGroups, clusterGroups, varDirs).map((l) => l.vars);
  checkUnknownVars(Object.assign({}, ...clusterLayers) as Vars, [...CLUSTER_VARS, ...HOST_VARS], problems);
  const cluster = new VarReader(new VarScope([KUBESPRAY_DEFAULTS, ...clusterLayers]));
  const settings = readClusterSettings(cluster, version);
  problems.push(...cluster.problems);

  const inRole = (name: string) => ['kube_control_plane', 'etcd', 'kube_node'].some((g) => members.get(g)?.has(name));
  const hosts: InventoryHost[] = [];
  for (const rh of raw.hosts.filter((h) => inRole(h.name))) {
    const groups = [...rawMembers].filter(([, set]) => set.has(rh.name)).map(([g]) => g);
    const layers = hostLayers(raw, rh.name, groups.length > 0 ? groups : ['ungrouped'], clusterGroups, varDirs);
    const own: Vars[] = layers.filter((l) => !l.clusterWide).map((l) => l.vars);
    const scope = new VarScope([KUBESPRAY_DEFAULTS, ...layers.map((l) => l.vars), { inventory_hostname: rh.name }]);
    const host = readHost(rh.name, own, scope, settings.inventory, members, problems);
    if (host) hosts.push(host);
  }
  checkHostSet(hosts, members, problems);
  settings.inventory.warnings.push(...groupWarnings(raw, members, varDirs));
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, inventory: { ...settings.inventory, hosts }, ignoredHosts: raw.hosts.filter((h) => !inRole(h.name)).map((h) => h.name) };
}

function resolveGroups(raw: RawInventory, problems: InventoryProblem[]): Map<string, Set<string>> {
  const byName = new Map(raw.groups.map((g) => [g.name, g]));
  for (const g of raw.groups) {
    // Any group name Ansible accepts is fine (no_floating, gpu...); only the names must be safe to print.
    if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(g.name))
      problems.push({ group: g.name, field: 'group', message: 'a group name has letters, digits, "_", "-" and "."', where: g.where });
    for (const h of g.hosts) {
      if (!raw.hosts.some((x) => x.name === h))
        problems.push({
          host: h,
          group: g.name,
          field: 'hosts',
          message: `listed in group ${JSON.stringify(g.name)} but not defined under hosts`,
          where: g.where,
        });
    }
  }
  const members = new Map<string, Set<string>>();
  for (const g of raw.groups) {
    const key = GROUP_ALIASES[g.name] ?? g.name;
    const set = members.get(key) ?? new Set<string>();
    for (const h of expandGroup(byName, g.name, new Set())) set.add(h);
    members.set(key, set);
  }
  return members;
}

function expandGroup(byName: Map<string, RawGroup>, name: string, seen: Set<string>): string[] {
  const g = byName.get(name);
  if (!g || seen.has(name)) return [];
  seen.add(name);
  return [...g.hosts, ...g.children.flatMap((c) => expandGroup(byName, c, seen))];
}

/** Every group of the inventory, under its own name, with the hosts it holds directly or through children. */
function rawMembership(raw: RawInventory): Map<string, Set<string>> {
  const byName = new Map(raw.groups.map((g) => [g.name, g]));
  return new Map(raw.groups.map((g) => [g.name, new Set(expandGroup(byName, g.name, new Set()))]));
}

/** k8s_cluster under any of its spellings, and every group above it: read once, cluster-wide. */
function clusterGroupNames(raw: RawInventory, rawMembers: Map<string, Set<string>>): Set<string> {
  const out = new Set(raw.groups.filter((g) => GROUP_ALIASES[g.name] === 'k8s_cluster').map((g) => g.name));
  const byName = new Map(raw.groups.map((g) => [g.name, g]));
  for (const g of raw.groups) {
    if (out.has(g.name)) continue;
    const below = new Set<string>();
    const walk = (n: string): void => {
      for (const c of byName.get(n)?.children ?? []) {
        if (below.has(c)) continue;
        below.add(c);
        walk(c);
      }
    };
    walk(g.name);
    if ([...below].some((c) => GROUP_ALIASES[c] === 'k8s_cluster') && rawMembers.has(g.name)) out.add(g.name);
  }
  out.delete('all');
  return out;
}

/** The kubespray group names, every spelling: a group one edit away from one of them is likely a typo. */
const KUBESPRAY_GROUPS = Object.keys(GROUP_ALIASES).filter((g) => !['all', 'ungrouped'].includes(g));

/**
 * Warnings about what Ansible would silently leave out: a host in no kubespray group (kubespray does
 * nothing with it), a group one edit away from a kubespray group (its hosts get no role), and
 * group_vars/ or host_vars/ files that name no group or host of the inventory (Ansible loads none).
 */
function groupWarnings(raw: RawInventory, members: Map<string, Set<string>>, dirs: VarDirs): string[] {
  const out: string[] = [];
  for (const g of raw.groups) {
    if (g.name in GROUP_ALIASES) continue;
    const meant = KUBESPRAY_GROUPS.find((k) => editDistance(g.name, k) === 1);
    if (meant) out.push(`group ${JSON.stringify(g.name)} is one edit from kubespray's ${meant}; its hosts get no ${GROUP_ALIASES[meant]} role (rename it?)`);
  }
  const roles = ['kube_control_plane', 'etcd', 'kube_node', 'calico_rr', 'bastion'];
  for (const h of raw.hosts) {
    if (!roles.some((r) => members.get(r)?.has(h.name)))
      out.push(`host ${JSON.stringify(h.name)} is in no kubespray group (${roles.join(', ')}); kubespray and kubeward plan leave it out`);
  }
  const groupNames = new Set(['all', 'ungrouped', ...raw.groups.map((g) => g.name)]);
  const hostNames = new Set(raw.hosts.map((h) => h.name));
  for (const dir of [dirs.inventory, dirs.playbook]) {
    for (const [name, files] of dir?.groups ?? []) {
      if (!groupNames.has(name)) out.push(`${files[0]?.source ?? name}: no group ${JSON.stringify(name)} in the inventory; Ansible does not load it`);
    }
    for (const [name, files] of dir?.hosts ?? []) {
      if (!hostNames.has(name)) out.push(`${files[0]?.source ?? name}: no host ${JSON.stringify(name)} in the inventory; Ansible does not load it`);
    }
  }
  return out;
}

function checkUnknownVars(vars: Vars, known: readonly string[], problems: InventoryProblem[], host?: string): void {
  for (const key of Object.keys(vars)) {
    if (known.includes(key) || NOT_TYPOS.has(key) || key in KUBESPRAY_DEFAULTS) continue;
    // kubespray has hundreds of other variables; pasted group vars keep them, so only near-misses are errors.
    const meant = likelyMeant(key, known);
    if (meant) problems.push({ host, field: key, message: `unknown variable; did you mean ${meant}?` });
  }
}

interface ClusterSettings {
  inventory: Omit<Inventory, 'hosts'>;
}

const DOMAIN = 'a DNS domain (letters, digits, "-" and ".")';
const PATH_RULE = 'an absolute path of letters, digits, ".", "_" and "-", each segment starting with a letter, digit or "_"';

function readClusterSettings(v: VarReader, version: KubesprayVersion): ClusterSettings {
  const warnings: string[] = [];
  const apiserverPort = v.port('kube_apiserver_port') ?? 6443;
  const external = readExternalLb(v, apiserverPort);
  // roles/kubespray_defaults/defaults/main/main.yml: loadbalancer_apiserver_localhost: "{{ loadbalancer_apiserver is not defined }}".
  // A MetalLB VIP needs the cluster to exist, so kubeward's default keeps the nodes on the node-local LB.
  const localLbSet = v.setByInventory('loadbalancer_apiserver_localhost');
  const localLb = (localLbSet ? v.bool('loadbalancer_apiserver_localhost') : undefined) ?? (external === undefined || external.provider === 'metallb');
  const lbTypeText = v.string('loadbalancer_apiserver_type') ?? 'nginx';
  if (!LB_TYPES.includes(lbTypeText as LbType)) v.problem('loadbalancer_apiserver_type', `${shown(lbTypeText)} is not one of ${LB_TYPES.join(', ')}`);
  const lbType = lbTypeText as LbType;
  const clusterName = v.matching('cluster_name', isHostName, DOMAIN) ?? 'cluster.local';
  const ipv4 = v.bool('ipv4_stack') ?? true;
  const ipv6 = v.bool('ipv6_stack') ?? false;
  if (!ipv4 && !ipv6) v.problem('ipv6_stack', 'false while ipv4_stack is false too: the cluster needs at least one stack; set ipv6_stack: true for IPv6-only');
  // roles/kubespray_defaults/vars/main/main.yml: kube_service_subnets takes the IPv4 range first, the IPv6 one on IPv6-only clusters.
  const serviceVar = ipv4 ? 'kube_service_addresses' : 'kube_service_addresses_ipv6';
  const serviceCidr = v.string(serviceVar) ?? (ipv4 ? '10.233.0.0/18' : 'fd85:ee78:d8a6:8607::1000/116');
  if (firstServiceIp(serviceCidr) === undefined) v.problem(serviceVar, `${shown(serviceCidr)} is not a CIDR like 10.233.0.0/18`);
  const supplementary = v.stringList('supplementary_addresses_in_ssl_keys');
  for (const s of supplementary)
    if (!isPlainIp(s) && !isDnsName(s)) v.problem('supplementary_addresses_in_ssl_keys', `${shown(s)} is neither an IP address nor a DNS name`);
  const certDir = v.path('kube_cert_dir') ?? '/etc/kubernetes/ssl';
  const caFile = v.setByInventory('kubeward_healthcheck_ca_file') ? v.string('kubeward_healthcheck_ca_file') : undefined;
  const caFileOk = (f: string) => isSafeAbsolutePath(f) && !f.endsWith('/');
  if (caFile !== undefined && caFile !== '' && !caFileOk(caFile))
    v.problem('kubeward_healthcheck_ca_file', `${shown(caFile)} is not ${PATH_RULE} (or "" for unverified checks)`);
  const image = (name: string, repo: string, tag: string) => `${v.imageRepo(`${name}_image_repo`) ?? repo}:${v.imageTag(`${name}_image_tag`) ?? tag}`;
  const lbName = readLbDomainName(v, version, localLb, external);
  const podName =
    lbType === 'kubeward' && !v.setByInventory('loadbalancer_apiserver_pod_name') ? 'kubeward-proxy' : v.objectName('loadbalancer_apiserver_pod_name');
  const kubeProxyMode = v.oneOf('kube_proxy_mode', ['ipvs', 'iptables', 'nftables']) ?? 'ipvs';
  const strictArp = v.bool('kube_proxy_strict_arp') ?? false;
  if (external?.provider === 'metallb') {
    if (!localLb)
      warnings.push(
        `kubeward_vip_provider metallb with loadbalancer_apiserver_localhost false: every node would reach the apiserver through ${external.address ?? 'the VIP'}, which MetalLB announces only once kube-proxy and the MetalLB speaker run, and they need the apiserver first (a bootstrap cycle); keep loadbalancer_apiserver_localhost true`,
      );
    if (kubeProxyMode === 'ipvs' && !strictArp)
      warnings.push('MetalLB in layer-2 mode with kube_proxy_mode ipvs needs kube_proxy_strict_arp: true (MetalLB installation docs); it is false');
  }
  return {
    inventory: {
      externalLb: external,
      lbDomainName: lbName,
      kubespray: version,
      localLb,
      lbType,
      localLbPort: v.port('loadbalancer_apiserver_port') ?? v.port('nginx_kube_apiserver_port') ?? apiserverPort,
      localLbHealthcheckPort: v.port('loadbalancer_apiserver_healthcheck_port'),
      apiserverPort,
      apiserverInsecurePort: v.port('kube_apiserver_insecure_port', { allowZero: true }) ?? 0,
      etcdMultiaccess: v.bool('etcd_multiaccess') ?? true,
      supplementaryAddresses: supplementary,
      clusterName,
      // dns_domain defaults to "{{ cluster_name }}", already checked: one bad value, one problem.
      dnsDomain: (v.setByInventory('dns_domain') ? v.matching('dns_domain', isHostName, DOMAIN) : clusterName) ?? clusterName,
      serviceCidr,
      kubeVipAddress: v.has('kube_vip_address') ? v.ip('kube_vip_address') : undefined,
      ipv4Stack: ipv4,
      ipv6Stack: ipv6,
      certDir,
      etcdCertDir: v.path('etcd_cert_dir') ?? '/etc/ssl/etcd/ssl',
      healthcheckCaFile: caFile === undefined ? `${certDir}/ca.crt` : caFile === '' || caFileOk(caFile) ? caFile : '',
      populateHostsFile: v.bool('populate_inventory_to_hosts_file') ?? true,
      images: {
        nginx: image('nginx', 'docker.io/library/nginx', '1.30.1-alpine'),
        haproxy: image('haproxy', 'docker.io/library/haproxy', '3.2.19-alpine'),
        kubeward: image('kubeward', KUBEWARD_IMAGE_REPO, KUBEWARD_IMAGE.slice(KUBEWARD_IMAGE_REPO.length + 1)),
      },
      lbPod: {
        name: podName ?? (lbType === 'nginx' ? 'nginx-proxy' : 'haproxy'),
        cpuRequests: v.quantity('loadbalancer_apiserver_cpu_requests') ?? '25m',
        memoryRequests: v.quantity('loadbalancer_apiserver_memory_requests') ?? '32M',
        pullPolicy: v.oneOf('k8s_image_pull_policy', ['Always', 'IfNotPresent', 'Never']) ?? 'IfNotPresent',
        keepaliveTimeout: v.duration('loadbalancer_apiserver_keepalive_timeout') ?? '5m',
      },
      manifestDir: v.path('kube_manifest_dir') ?? '/etc/kubernetes/manifests',
      configDirs: { nginx: v.path('nginx_config_dir') ?? '/etc/nginx', haproxy: v.path('haproxy_config_dir') ?? '/etc/haproxy' },
      kubeProxy: { mode: kubeProxyMode, strictArp },
      warnings,
    },
  };
}

/**
 * apiserver_loadbalancer_domain_name. v2.30.0+ (roles/kubespray_defaults/defaults/main/main.yml):
 * "{{ 'localhost' if loadbalancer_apiserver_localhost else (loadbalancer_apiserver.address | d(undef())) }}";
 * before: "lb-apiserver.kubernetes.local".
 */
function readLbDomainName(v: VarReader, version: KubesprayVersion, localLb: boolean, external: Inventory['externalLb']): string | undefined {
  const set = v.string('apiserver_loadbalancer_domain_name');
  if (set !== undefined) {
    if (isPlainIp(set) || isHostName(set)) return set;
    v.problem('apiserver_loadbalancer_domain_name', `${shown(set)} is neither a DNS name (letters, digits, "-" and ".") nor an IP address`);
    return undefined;
  }
  if (!hasLocalhostLbName(version)) return 'lb-apiserver.kubernetes.local';
  if (localLb) return 'localhost';
  if (external && external.address === undefined) {
    v.problem(
      'loadbalancer_apiserver',
      'has no address and apiserver_loadbalancer_domain_name is not set: since kubespray v2.30.0 the endpoint name defaults to the address; set one of them',
    );
  }
  return external?.address;
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
  if (address !== undefined && address !== null && !isPlainIp(String(address)))
    v.problem('loadbalancer_apiserver.address', `${shown(address)} is not an IP address`);
  const addr = address === undefined || address === null ? undefined : String(address);
  // kube-vip as kubespray's docs/ingress/kube-vip.md sets it up: address: "{{ kube_vip_address }}".
  const kubeVip = v.bool('kube_vip_enabled') === true && addr !== undefined && v.has('kube_vip_address') && String(v.get('kube_vip_address')) === addr;
  const provider: VipProvider = v.oneOf('kubeward_vip_provider', VIP_PROVIDERS) ?? (kubeVip ? 'kube-vip' : 'external');
  const lbClass = v.matching(
    'kubeward_metallb_load_balancer_class',
    (s) => /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(\/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/.test(s) && s.length <= 253,
    'a loadBalancerClass like metallb.io/metallb',
  );
  const pool = v.matching('kubeward_metallb_address_pool', isObjectName, 'a MetalLB IPAddressPool name');
  return {
    address: addr,
    port: v.port('loadbalancer_apiserver.port', { value: port }) ?? apiserverPort,
    provider,
    ...(lbClass !== undefined ? { loadBalancerClass: lbClass } : {}),
    ...(pool !== undefined ? { addressPool: pool } : {}),
  };
}

/**
 * One host. main_ip / main_access_ip as roles/network_facts/tasks/main.yaml computes them: ip (ip6
 * on IPv6-only clusters), falling back to the default-route fact, and access_ip (access_ip6)
 * falling back to main_ip.
 */
function readHost(
  name: string,
  own: Vars[],
  scope: VarScope,
  cluster: ClusterSettings['inventory'],
  members: Map<string, Set<string>>,
  problems: InventoryProblem[],
): InventoryHost | undefined {
  for (const vars of own) {
    for (const key of Object.keys(vars)) {
      if ((CLUSTER_VARS as readonly string[]).includes(key))
        problems.push({ host: name, field: key, message: 'is cluster-wide in kubeward plan; set it once under vars (or group_vars/all)' });
    }
    checkUnknownVars(vars, [...HOST_VARS, ...CLUSTER_VARS], problems, name);
  }
  const v = new VarReader(scope, name);
  // Every host name becomes a directory under --out and a word in configs; control-plane names also a SAN.
  if (!isHostName(name)) v.problem('name', `${shown(name)} is not an RFC 1123 host name (letters, digits, "-" and "."); rename the host in the inventory`);
  const v6 = !cluster.ipv4Stack;
  const [ipVar, accessVar, family, fact] = v6
    ? (['ip6', 'access_ip6', 6, 'ansible_default_ipv6'] as const)
    : (['ip', 'access_ip', 4, 'ansible_default_ipv4'] as const);
  const ipGiven = scope.raw(ipVar) !== undefined && scope.raw(ipVar) !== null;
  let ip = ipGiven ? v.ip(ipVar) : undefined;
  let ipSource: InventoryHost['ipSource'] = ipVar;
  if (!ipGiven) {
    const ansibleHost = v.string('ansible_host');
    if (ansibleHost !== undefined && isPlainIp(ansibleHost) && isIP(ansibleHost) === family) {
      ip = ansibleHost;
      ipSource = 'ansible_host';
      cluster.warnings.push(
        `${name}: no ${ipVar}; kubespray would use the default-route address (${fact}), which only a run on the host knows; kubeward used ansible_host ${ansibleHost}: set ${ipVar} to be sure`,
      );
    } else {
      v.problem(
        ipVar,
        `missing; add ${ipVar}: <the node address other nodes reach> (kubespray would use the ${fact} fact; ansible_host is used only when it is an IPv${family} address)`,
      );
    }
  }
  if (ip !== undefined && isIP(ip) !== family) {
    v.problem(ipVar, `${shown(ip)} is not an IPv${family} address`);
    ip = undefined;
  }
  const accessIp = v.has(accessVar) ? v.ip(accessVar) : undefined;
  const override = v.setByInventory('kube_override_hostname')
    ? v.matching('kube_override_hostname', isHostName, 'an RFC 1123 host name (letters, digits, "-" and "."); it is the node name and a certificate SAN')
    : undefined;
  const controlPlane = members.get('kube_control_plane')?.has(name) ?? false;
  const bind = v.ip('kube_apiserver_bind_address') ?? '::';
  problems.push(...v.problems);
  if (ip === undefined) return undefined;
  return {
    name,
    ip,
    accessIp: accessIp ?? ip,
    hasAccessIp: accessIp !== undefined,
    ipSource,
    apiserverBindAddress: bind,
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
    if (other !== undefined)
      problems.push({ host: h.name, field: 'ip', message: `${h.ip} is also the ip of host "${other}"; each host needs its own address` });
    else byIp.set(h.ip, h.name);
  }
}
