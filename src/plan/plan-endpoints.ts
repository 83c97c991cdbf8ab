// kubespray's HA-mode endpoint table as a function: for every node, the URL each client uses to
// reach the apiserver and etcd, the reason, and which node-local load balancer frontends it needs.
// Follows docs/operations/ha-mode.md and kube_apiserver_endpoint / kube_apiserver_global_endpoint in
// roles/kubespray_defaults/defaults/main/main.yml.
import { isIP } from 'node:net';
import { hasLocalhostLbName } from './kubespray-defaults.ts';
import { controlPlaneHosts, etcdHosts, isClusterNode, rolesOf, type HostRole, type Inventory, type InventoryHost, type LbType } from './inventory.ts';

export type Component = 'kubelet' | 'kube-proxy' | 'controller-manager/scheduler' | 'etcd-clients';

export interface EndpointRow {
  component: Component;
  /** One URL, or for etcd a comma-separated list (the form of --etcd-servers). */
  url: string;
  reason: string;
}

export interface LbUpstream {
  name: string;
  host: string;
  port: number;
}

export interface LbFrontend {
  name: 'apiserver' | 'etcd';
  /** Addresses to listen on ("127.0.0.1", "::1"), all on port. */
  listen: string[];
  port: number;
  upstreams: LbUpstream[];
}

export interface NodePlan {
  name: string;
  roles: HostRole[];
  ip: string;
  accessIp: string;
  endpoints: EndpointRow[];
  /** The node-local load balancer this node runs, if any. */
  localLb?: { type: LbType; frontends: LbFrontend[] };
}

export interface ClusterPlan {
  nodes: NodePlan[];
  /** kube_apiserver_global_endpoint: what cluster-wide consumers (Calico, Cilium) use as the apiserver. */
  global: { url: string; reason: string };
  /** What clients outside the cluster use (the "external" column). */
  external: { url: string; reason: string };
  /** The external load balancer's frontend, when loadbalancer_apiserver is declared. */
  externalLb?: { address?: string; port: number; upstreams: LbUpstream[] };
  warnings: string[];
}

export const ETCD_CLIENT_PORT = 2379;

export function hostPortUrl(scheme: 'https' | 'http', host: string, port: number): string {
  return `${scheme}://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

/** kubespray maps the wildcard bind addresses to 127.0.0.1 ("dbip"); anything else is a custom bind IP ("cbip"). */
export function isWildcardBind(bind: string): boolean {
  return bind === '::' || bind === '0.0.0.0';
}

function localBindHost(host: InventoryHost): string {
  return isWildcardBind(host.apiserverBindAddress) ? '127.0.0.1' : host.apiserverBindAddress;
}

export function planEndpoints(inv: Inventory): ClusterPlan {
  const cps = controlPlaneHosts(inv);
  const first = cps[0]!;
  const warnings = [...inv.warnings, ...clusterWarnings(inv, first.name, cps.length)];
  const apiUpstreams = cps.map((h) => ({ name: h.name, host: h.accessIp, port: inv.apiserverPort }));
  const etcdUpstreams = etcdHosts(inv).map((h) => ({ name: h.name, host: h.accessIp, port: ETCD_CLIENT_PORT }));
  const firstUrl = hostPortUrl('https', first.accessIp, inv.apiserverPort);
  const firstWhy = `${first.name}'s ${first.hasAccessIp ? accessName(inv) : `${first.ipSource} (no ${accessName(inv)})`}`;
  const shared: Shared = { firstUrl, firstWhy, apiUpstreams, etcdUpstreams, warnings };
  const nodes = inv.hosts.filter(isClusterNode).map((h) => planNode(inv, h, shared));
  const lb = inv.externalLb;
  return {
    nodes,
    global: globalEndpoint(inv, shared),
    external: externalEndpoint(inv, shared),
    externalLb: lb && lb.provider === 'external' ? { address: lb.address, port: lb.port, upstreams: apiUpstreams } : undefined,
    warnings,
  };
}

const mainName = (inv: Inventory) => (inv.ipv4Stack ? 'ip' : 'ip6');
const accessName = (inv: Inventory) => (inv.ipv4Stack ? 'access_ip' : 'access_ip6');

/** The URL of the external LB as kubespray writes it: apiserver_loadbalancer_domain_name | ipwrap, loadbalancer_apiserver.port. */
function externalLbUrl(inv: Inventory): string {
  const lb = inv.externalLb!;
  return hostPortUrl('https', inv.lbDomainName ?? lb.address!, lb.port);
}

/**
 * kube_apiserver_global_endpoint (roles/kubespray_defaults/defaults/main/main.yml), what
 * cluster-wide consumers use (Calico's and Cilium's apiserver host): the external LB, else
 * localhost with the local LB (v2.30+: on loadbalancer_apiserver_port; before: only when that port
 * equals kube_apiserver_port), else the first control-plane node.
 */
function globalEndpoint(inv: Inventory, s: Shared): { url: string; reason: string } {
  if (inv.externalLb) {
    const reason =
      inv.lbDomainName === 'localhost'
        ? 'loadbalancer_apiserver with loadbalancer_apiserver_localhost: apiserver_loadbalancer_domain_name is localhost, the node-local load balancer'
        : 'loadbalancer_apiserver is defined: the external load balancer by apiserver_loadbalancer_domain_name';
    return { url: externalLbUrl(inv), reason };
  }
  if (inv.localLb) {
    if (hasLocalhostLbName(inv.kubespray))
      return {
        url: hostPortUrl('https', 'localhost', inv.localLbPort),
        reason: 'localhost: the node-local load balancer, or the apiserver itself on control-plane nodes',
      };
    if (inv.localLbPort === inv.apiserverPort)
      return {
        url: hostPortUrl('https', 'localhost', inv.apiserverPort),
        reason: 'the node-local load balancer (kubespray before v2.30: only when its port is kube_apiserver_port)',
      };
  }
  return { url: s.firstUrl, reason: `the first control-plane node, ${s.firstWhy}` };
}

/** What clients outside the cluster use: the VIP when there is one, else the first control-plane node. */
function externalEndpoint(inv: Inventory, s: Shared): { url: string; reason: string } {
  const lb = inv.externalLb;
  if (!lb) return { url: s.firstUrl, reason: `no external load balancer: the first control-plane node, ${s.firstWhy}` };
  // With the local LB too, apiserver_loadbalancer_domain_name is "localhost", which outside clients cannot use.
  const host = inv.lbDomainName !== undefined && inv.lbDomainName !== 'localhost' ? inv.lbDomainName : lb.address;
  const by = { external: 'the external load balancer', metallb: 'the MetalLB Service on the VIP', 'kube-vip': 'the kube-vip VIP' }[lb.provider];
  return { url: hostPortUrl('https', host ?? 'localhost', lb.port), reason: `${by}, loadbalancer_apiserver` };
}

interface Shared {
  firstUrl: string;
  firstWhy: string;
  apiUpstreams: LbUpstream[];
  etcdUpstreams: LbUpstream[];
  warnings: string[];
}

/** kubespray installs the local LB on hosts outside kube_control_plane, or on any host whose bind address is not "::" (roles/kubernetes/node/tasks/main.yml). */
function runsLocalLb(inv: Inventory, h: InventoryHost): boolean {
  return inv.localLb && (!h.controlPlane || !isWildcardBind(h.apiserverBindAddress));
}

function planNode(inv: Inventory, h: InventoryHost, s: Shared): NodePlan {
  const endpoints: EndpointRow[] = [kubeletRow(inv, h, s), kubeProxyRow(inv)];
  if (h.controlPlane) endpoints.push(controlPlaneComponentsRow(inv, h));
  const etcdMember = etcdHosts(inv).includes(h);
  endpoints.push(etcdRow(inv, etcdMember, s.etcdUpstreams));
  const frontends: LbFrontend[] = [];
  const listen = inv.ipv6Stack || !inv.ipv4Stack ? ['127.0.0.1', '::1'] : ['127.0.0.1'];
  if (runsLocalLb(inv, h)) {
    frontends.push({ name: 'apiserver', listen, port: inv.localLbPort, upstreams: s.apiUpstreams });
    if (h.controlPlane && h.apiserverBindAddress === '127.0.0.1' && inv.localLbPort === inv.apiserverPort) {
      s.warnings.push(
        `${h.name}: kube_apiserver_bind_address 127.0.0.1 and the local load balancer both want 127.0.0.1:${inv.apiserverPort}; bind the apiserver to the node address instead`,
      );
    }
  }
  if (!inv.etcdMultiaccess && !etcdMember) frontends.push({ name: 'etcd', listen: ['127.0.0.1'], port: ETCD_CLIENT_PORT, upstreams: s.etcdUpstreams });
  return {
    name: h.name,
    roles: rolesOf(h),
    ip: h.ip,
    accessIp: h.accessIp,
    endpoints,
    localLb: frontends.length > 0 ? { type: inv.lbType, frontends } : undefined,
  };
}

/** kube_apiserver_endpoint (roles/kubespray_defaults/defaults/main/main.yml), the server of kubelet.conf. */
function kubeletRow(inv: Inventory, h: InventoryHost, s: Shared): EndpointRow {
  const lb = inv.externalLb;
  // The first branch applies to every host, control-plane nodes included: that is what kubespray's
  // code does, whatever the table in docs/operations/ha-mode.md says.
  if (lb) {
    const via =
      inv.lbDomainName === 'localhost'
        ? 'loadbalancer_apiserver with loadbalancer_apiserver_localhost: localhost (the node-local load balancer, the apiserver itself on control-plane nodes)'
        : `external load balancer ${lb.address ?? '(address by DNS)'}:${lb.port} via ${inv.lbDomainName ?? lb.address}`;
    return {
      component: 'kubelet',
      url: externalLbUrl(inv),
      reason: inv.lbDomainName === 'localhost' ? via : `${via}; kubespray sends control-plane nodes this way too`,
    };
  }
  if (!h.controlPlane && inv.localLb)
    return {
      component: 'kubelet',
      url: hostPortUrl('https', 'localhost', inv.localLbPort),
      reason: `node-local ${inv.lbType} load balancer on port ${inv.localLbPort}`,
    };
  if (h.controlPlane) {
    const bind = localBindHost(h);
    const why = isWildcardBind(h.apiserverBindAddress) ? `bind address ${h.apiserverBindAddress} maps to 127.0.0.1` : `custom bind address ${bind}`;
    return { component: 'kubelet', url: hostPortUrl('https', bind, inv.apiserverPort), reason: `control-plane nodes use their own apiserver (${why})` };
  }
  return { component: 'kubelet', url: s.firstUrl, reason: `no load balancer: the first control-plane node, ${s.firstWhy} (not highly available)` };
}

/**
 * kube-proxy has one kubeconfig (a ConfigMap) for every node; roles/kubernetes/kubeadm/tasks/main.yml
 * rewrites its server to kube_apiserver_endpoint with an external LB and to
 * https://127.0.0.1:<kube_apiserver_port> with the local one. Without either, kubeadm leaves
 * controlPlaneEndpoint, the first control-plane node's main_ip
 * (roles/kubernetes/control-plane/templates/kubeadm-config.v1beta4.yaml.j2).
 */
function kubeProxyRow(inv: Inventory): EndpointRow {
  if (inv.externalLb)
    return { component: 'kube-proxy', url: externalLbUrl(inv), reason: 'one kubeconfig for all nodes: kube_apiserver_endpoint, as for the kubelet' };
  if (inv.localLb) {
    return {
      component: 'kube-proxy',
      url: hostPortUrl('https', '127.0.0.1', inv.apiserverPort),
      reason: 'one kubeconfig for all nodes: 127.0.0.1 is the local load balancer, or the apiserver itself on control-plane nodes',
    };
  }
  const first = controlPlaneHosts(inv)[0]!;
  return {
    component: 'kube-proxy',
    url: hostPortUrl('https', first.ip, inv.apiserverPort),
    reason: `one kubeconfig for all nodes; no load balancer: kubeadm's controlPlaneEndpoint, ${first.name}'s ${mainName(inv)}`,
  };
}

function controlPlaneComponentsRow(inv: Inventory, h: InventoryHost): EndpointRow {
  const component = 'controller-manager/scheduler';
  if (inv.apiserverInsecurePort > 0) {
    return {
      component,
      url: hostPortUrl('http', '127.0.0.1', inv.apiserverInsecurePort),
      reason: 'kube_apiserver_insecure_port is set: plain HTTP to the local apiserver (removed in Kubernetes 1.24)',
    };
  }
  return { component, url: hostPortUrl('https', localBindHost(h), inv.apiserverPort), reason: 'the apiserver on the same node' };
}

function etcdRow(inv: Inventory, etcdMember: boolean, members: LbUpstream[]): EndpointRow {
  const component = 'etcd-clients';
  const local = hostPortUrl('https', '127.0.0.1', ETCD_CLIENT_PORT);
  if (inv.etcdMultiaccess) {
    return {
      component,
      url: members.map((m) => hostPortUrl('https', m.host, m.port)).join(','),
      reason: `etcd_access_addresses: every member's ${accessName(inv)}, the etcd client balances and fails over itself`,
    };
  }
  if (etcdMember) return { component, url: local, reason: 'this node is an etcd member; its own member answers on 127.0.0.1' };
  return { component, url: local, reason: 'node-local etcd proxy on 127.0.0.1:2379 (etcd_multiaccess: false)' };
}

function clusterWarnings(inv: Inventory, firstName: string, cpCount: number): string[] {
  const w: string[] = [];
  const lb = inv.externalLb;
  if (!lb && !inv.localLb && cpCount > 1) {
    w.push(
      `no load balancer (loadbalancer_apiserver_localhost: false, no loadbalancer_apiserver): non-control-plane nodes all use ${firstName}; losing it takes them down`,
    );
  }
  if (inv.localLb && !lb && inv.localLbPort !== inv.apiserverPort) {
    w.push(
      `loadbalancer_apiserver_port ${inv.localLbPort} differs from kube_apiserver_port ${inv.apiserverPort}: kubespray points kube-proxy at https://127.0.0.1:${inv.apiserverPort}, where nothing listens on workers (its sample says the port must be 6443)`,
    );
  }
  if (lb && inv.localLb && lb.port !== inv.localLbPort) {
    w.push(
      `loadbalancer_apiserver.port ${lb.port} with loadbalancer_apiserver_localhost: nodes dial https://localhost:${lb.port}, but the node-local load balancer listens on ${inv.localLbPort}; use the same port`,
    );
  }
  if (lb && lb.address === undefined && lb.provider !== 'external') {
    w.push(`loadbalancer_apiserver has no address: nothing for ${lb.provider} to announce`);
  }
  if (lb && lb.provider === 'external' && lb.address === undefined) {
    w.push(
      `loadbalancer_apiserver has no address: ${inv.lbDomainName ?? 'the name'} must resolve through DNS; no external HAProxy bind address is rendered for it`,
    );
  }
  if (lb && lb.provider === 'external' && lb.address !== undefined && lb.port === inv.apiserverPort) {
    w.push(
      `loadbalancer_apiserver.port ${lb.port} equals kube_apiserver_port: an HAProxy holding the VIP on a control-plane node cannot bind it while the apiserver binds every address; use another port or set kube_apiserver_bind_address`,
    );
  }
  if (lb && lb.provider === 'external' && !inv.localLb) {
    w.push(
      `every node, control-plane nodes included, reaches the apiserver through ${externalLbUrl(inv)} (kubespray's kube_apiserver_endpoint): the load balancer must be up before the cluster; if MetalLB announces it, set kubeward_vip_provider: metallb`,
    );
  }
  if (inv.apiserverInsecurePort > 0) {
    w.push(`kube_apiserver_insecure_port ${inv.apiserverInsecurePort}: unauthenticated plain HTTP; the flag was removed in Kubernetes 1.24`);
  }
  return w;
}
