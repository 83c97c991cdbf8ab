// kubespray's HA-mode endpoint table as a function: for every node, the URL each client uses to
// reach the apiserver and etcd, the reason, and which node-local load balancer frontends it needs.
// Follows docs/operations/ha-mode.md and kube_apiserver_endpoint / kube_apiserver_global_endpoint in
// roles/kubespray_defaults/defaults/main/main.yml.
import { isIP } from 'node:net';
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
  const warnings = clusterWarnings(inv, first.name, cps.length);
  const apiUpstreams = cps.map((h) => ({ name: h.name, host: h.accessIp, port: inv.apiserverPort }));
  const etcdUpstreams = etcdHosts(inv).map((h) => ({ name: h.name, host: h.accessIp, port: ETCD_CLIENT_PORT }));
  const firstUrl = hostPortUrl('https', first.accessIp, inv.apiserverPort);
  const firstWhy = `${first.name}'s ${first.hasAccessIp ? 'access_ip' : 'ip (no access_ip)'}`;
  const nodes = inv.hosts.filter(isClusterNode).map((h) => planNode(inv, h, { firstUrl, firstWhy, apiUpstreams, etcdUpstreams, warnings }));
  const lb = inv.externalLb;
  return {
    nodes,
    external: lb
      ? { url: hostPortUrl('https', inv.lbDomainName, lb.port), reason: 'the external load balancer, loadbalancer_apiserver' }
      : { url: firstUrl, reason: `no external load balancer: the first control-plane node, ${firstWhy}` },
    externalLb: lb ? { address: lb.address, port: lb.port, upstreams: apiUpstreams } : undefined,
    warnings,
  };
}

interface Shared {
  firstUrl: string;
  firstWhy: string;
  apiUpstreams: LbUpstream[];
  etcdUpstreams: LbUpstream[];
  warnings: string[];
}

function planNode(inv: Inventory, h: InventoryHost, s: Shared): NodePlan {
  const endpoints: EndpointRow[] = [kubeletRow(inv, h, s), kubeProxyRow(inv, s)];
  if (h.controlPlane) endpoints.push(controlPlaneComponentsRow(inv, h));
  const etcdMember = etcdHosts(inv).includes(h);
  endpoints.push(etcdRow(inv, etcdMember, s.etcdUpstreams));
  const frontends: LbFrontend[] = [];
  const listen = inv.ipv6Stack ? ['127.0.0.1', '::1'] : ['127.0.0.1'];
  // kubespray runs the local LB on control-plane nodes too when the apiserver does not bind the
  // wildcard address, because the shared kube-proxy kubeconfig still says localhost.
  if (inv.localLb && !inv.externalLb && (!h.controlPlane || !isWildcardBind(h.apiserverBindAddress))) {
    frontends.push({ name: 'apiserver', listen, port: inv.localLbPort, upstreams: s.apiUpstreams });
    if (h.controlPlane && h.apiserverBindAddress === '127.0.0.1' && inv.localLbPort === inv.apiserverPort) {
      s.warnings.push(`${h.name}: kube_apiserver_bind_address 127.0.0.1 and the local load balancer both want 127.0.0.1:${inv.apiserverPort}; bind the apiserver to the node address instead`);
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

function kubeletRow(inv: Inventory, h: InventoryHost, s: Shared): EndpointRow {
  const lb = inv.externalLb;
  if (h.controlPlane) {
    const bind = localBindHost(h);
    const why = isWildcardBind(h.apiserverBindAddress) ? `bind address ${h.apiserverBindAddress} maps to 127.0.0.1` : `custom bind address ${bind}`;
    return { component: 'kubelet', url: hostPortUrl('https', bind, inv.apiserverPort), reason: `control-plane nodes use their own apiserver (${why})` };
  }
  if (lb) return { component: 'kubelet', url: hostPortUrl('https', inv.lbDomainName, lb.port), reason: `external load balancer ${lb.address ?? '(address by DNS)'}:${lb.port} via ${inv.lbDomainName}` };
  if (inv.localLb) return { component: 'kubelet', url: hostPortUrl('https', 'localhost', inv.localLbPort), reason: `node-local ${inv.lbType} load balancer on port ${inv.localLbPort}` };
  return { component: 'kubelet', url: s.firstUrl, reason: `no load balancer: the first control-plane node, ${s.firstWhy} (not highly available)` };
}

/** kube-proxy has one kubeconfig (a ConfigMap) for every node: kube_apiserver_global_endpoint. */
function kubeProxyRow(inv: Inventory, s: Shared): EndpointRow {
  const lb = inv.externalLb;
  if (lb) return { component: 'kube-proxy', url: hostPortUrl('https', inv.lbDomainName, lb.port), reason: 'one kubeconfig for all nodes: the external load balancer' };
  if (inv.localLb && inv.localLbPort === inv.apiserverPort) {
    return { component: 'kube-proxy', url: hostPortUrl('https', 'localhost', inv.apiserverPort), reason: 'one kubeconfig for all nodes: localhost is the local load balancer, or the apiserver itself on control-plane nodes' };
  }
  const why = inv.localLb ? `loadbalancer_apiserver_port ${inv.localLbPort} differs from kube_apiserver_port ${inv.apiserverPort}, so no localhost URL works on every node` : 'no load balancer';
  return { component: 'kube-proxy', url: s.firstUrl, reason: `one kubeconfig for all nodes; ${why}: the first control-plane node, ${s.firstWhy}` };
}

function controlPlaneComponentsRow(inv: Inventory, h: InventoryHost): EndpointRow {
  const component = 'controller-manager/scheduler';
  if (inv.apiserverInsecurePort > 0) {
    return { component, url: hostPortUrl('http', '127.0.0.1', inv.apiserverInsecurePort), reason: 'kube_apiserver_insecure_port is set: plain HTTP to the local apiserver (removed in Kubernetes 1.24)' };
  }
  return { component, url: hostPortUrl('https', localBindHost(h), inv.apiserverPort), reason: 'the apiserver on the same node' };
}

function etcdRow(inv: Inventory, etcdMember: boolean, members: LbUpstream[]): EndpointRow {
  const component = 'etcd-clients';
  const local = hostPortUrl('https', '127.0.0.1', ETCD_CLIENT_PORT);
  if (inv.etcdMultiaccess) {
    return { component, url: members.map((m) => hostPortUrl('https', m.host, m.port)).join(','), reason: 'etcd_multiaccess: every member, the etcd client balances and fails over itself' };
  }
  if (etcdMember) return { component, url: local, reason: 'this node is an etcd member; its own member answers on 127.0.0.1' };
  return { component, url: local, reason: 'node-local etcd proxy on 127.0.0.1:2379 (etcd_multiaccess: false)' };
}

function clusterWarnings(inv: Inventory, firstName: string, cpCount: number): string[] {
  const w: string[] = [];
  const lb = inv.externalLb;
  if (!lb && !inv.localLb && cpCount > 1) {
    w.push(`no load balancer (loadbalancer_apiserver_localhost: false, no loadbalancer_apiserver): non-control-plane nodes all use ${firstName}; losing it takes them down`);
  }
  if (inv.localLb && inv.localLbPort !== inv.apiserverPort) {
    w.push(`loadbalancer_apiserver_port ${inv.localLbPort} differs from kube_apiserver_port ${inv.apiserverPort}: kube-proxy cannot use the local load balancer and depends on ${firstName}`);
  }
  if (lb && lb.address === undefined) {
    w.push(`loadbalancer_apiserver has no address: ${inv.lbDomainName} must resolve through DNS; no /etc/hosts line, external HAProxy bind address or MetalLB Service is rendered for it`);
  }
  if (lb && lb.address !== undefined && lb.port === inv.apiserverPort) {
    w.push(`loadbalancer_apiserver.port ${lb.port} equals kube_apiserver_port: an HAProxy holding the VIP on a control-plane node cannot bind it while the apiserver binds every address; use another port or set kube_apiserver_bind_address`);
  }
  if (inv.apiserverInsecurePort > 0) {
    w.push(`kube_apiserver_insecure_port ${inv.apiserverInsecurePort}: unauthenticated plain HTTP; the flag was removed in Kubernetes 1.24`);
  }
  return w;
}
