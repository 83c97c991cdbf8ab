// The typed inventory that every plan function reads: hosts, their groups, and the cluster-wide
// settings under kubespray's variable names, with kubespray's defaults already applied.

import type { KubesprayVersion } from './kubespray-defaults.ts';

export type LbType = 'nginx' | 'haproxy' | 'kubeward';
export const LB_TYPES: readonly LbType[] = ['nginx', 'haproxy', 'kubeward'];

export interface InventoryHost {
  name: string;
  /**
   * kubespray's main_ip: `ip`, or `ip6` when ipv4_stack is false (roles/network_facts/tasks/main.yaml).
   * The address the node's own components bind and advertise.
   */
  ip: string;
  /** main_access_ip: `access_ip` (`access_ip6` on IPv6-only clusters), falling back to main_ip. */
  accessIp: string;
  /** True when access_ip (access_ip6) was given, so reasons can say which one was used. */
  hasAccessIp: boolean;
  /** The variable main_ip came from ("ip", "ip6", or "ansible_host" when ip was missing). */
  ipSource: 'ip' | 'ip6' | 'ansible_host';
  /** kube_apiserver_bind_address for this host (host var, else the cluster-wide value). */
  apiserverBindAddress: string;
  /** kube_override_hostname, when set: the node name, which also goes into the SANs. */
  overrideHostname?: string;
  controlPlane: boolean;
  etcd: boolean;
  worker: boolean;
}

/**
 * Who holds loadbalancer_apiserver's address: an external load balancer that exists before the
 * cluster (kubespray's meaning), MetalLB (a Service, so only once the cluster runs) or kube-vip
 * (static pods on the control-plane nodes).
 */
export type VipProvider = 'external' | 'metallb' | 'kube-vip';
export const VIP_PROVIDERS: readonly VipProvider[] = ['external', 'metallb', 'kube-vip'];

export interface ExternalLb {
  /** loadbalancer_apiserver.address: the VIP; absent when the name resolves by DNS alone. */
  address?: string;
  /** loadbalancer_apiserver.port, defaulting to kube_apiserver_port. */
  port: number;
  provider: VipProvider;
  /** kubeward_metallb_load_balancer_class: spec.loadBalancerClass of the MetalLB Service. */
  loadBalancerClass?: string;
  /** kubeward_metallb_address_pool: the MetalLB IPAddressPool that holds the VIP. */
  addressPool?: string;
}

export interface Inventory {
  /** In inventory order; control-plane order decides "the first control-plane node". */
  hosts: InventoryHost[];
  externalLb?: ExternalLb;
  /** apiserver_loadbalancer_domain_name; undefined when kubespray leaves it undefined (v2.30+). */
  lbDomainName?: string;
  /** The kubespray release whose behaviour is followed (--kubespray-version). */
  kubespray: KubesprayVersion;
  /** loadbalancer_apiserver_localhost */
  localLb: boolean;
  /** loadbalancer_apiserver_type */
  lbType: LbType;
  /** loadbalancer_apiserver_port (nginx_kube_apiserver_port in old inventories) */
  localLbPort: number;
  /** loadbalancer_apiserver_healthcheck_port; absent = no health listener on the local LB. */
  localLbHealthcheckPort?: number;
  /** kube_apiserver_port */
  apiserverPort: number;
  /** kube_apiserver_insecure_port; 0 = off (it was removed in Kubernetes 1.24). */
  apiserverInsecurePort: number;
  /** etcd_multiaccess: clients get every member instead of a local proxy on 127.0.0.1:2379. */
  etcdMultiaccess: boolean;
  supplementaryAddresses: string[];
  clusterName: string;
  dnsDomain: string;
  /** kube_service_addresses (or the IPv6 range on IPv6-only clusters). */
  serviceCidr: string;
  /** kube_vip_address, when kube-vip holds a VIP; it goes into the SANs. */
  kubeVipAddress?: string;
  /** ipv4_stack: false makes the cluster IPv6-only (main_ip is ip6). */
  ipv4Stack: boolean;
  /** ipv6_stack: local LBs listen on [::1] as well. */
  ipv6Stack: boolean;
  /** kube_cert_dir: where nodes keep ca.crt. */
  certDir: string;
  /** etcd_cert_dir: the etcd CA and the node-<host>.pem client certificates. */
  etcdCertDir: string;
  /** kubeward_healthcheck_ca_file: CA for verified /readyz checks; "" = do not verify. */
  healthcheckCaFile: string;
  populateHostsFile: boolean;
  images: { nginx: string; haproxy: string; kubeward: string };
  /** The static pod of the node-local LB (roles/kubernetes/node/defaults/main.yml and the manifests). */
  lbPod: { name: string; cpuRequests: string; memoryRequests: string; pullPolicy: string; keepaliveTimeout: string };
  /** kube_manifest_dir: where kubelet reads static pods. */
  manifestDir: string;
  /** nginx_config_dir, haproxy_config_dir: where the LB config lives on the node. */
  configDirs: { nginx: string; haproxy: string };
  /** kube_proxy_mode and kube_proxy_strict_arp, for the MetalLB prerequisites. */
  kubeProxy: { mode: string; strictArp: boolean };
  /** Things that are accepted but deserve a word (a missing ip), shown with the plan. */
  warnings: string[];
}

export type HostRole = 'control-plane' | 'etcd' | 'worker';

export function rolesOf(host: InventoryHost): HostRole[] {
  const roles: HostRole[] = [];
  if (host.controlPlane) roles.push('control-plane');
  if (host.etcd) roles.push('etcd');
  if (host.worker) roles.push('worker');
  return roles;
}

/** Nodes that run a kubelet: kubespray's k8s_cluster group. */
export function isClusterNode(host: InventoryHost): boolean {
  return host.controlPlane || host.worker;
}

export function controlPlaneHosts(inv: Inventory): InventoryHost[] {
  return inv.hosts.filter((h) => h.controlPlane);
}

export function etcdHosts(inv: Inventory): InventoryHost[] {
  // kubespray: etcd_hosts defaults to the control plane when the etcd group is empty (kubeadm etcd).
  const members = inv.hosts.filter((h) => h.etcd);
  return members.length > 0 ? members : controlPlaneHosts(inv);
}
