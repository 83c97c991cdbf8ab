// kubespray's role defaults for the variables kubeward plan reads, in kubespray's own (Jinja) form,
// so an inventory that overrides kube_config_dir or docker_image_repo changes what depends on them
// exactly as in kubespray. Checked against kubernetes-sigs/kubespray v2.31.0 and HEAD 46dbdd399
// (2026-08-21); the file each value comes from is named above it. Role defaults are Ansible's
// lowest precedence: every inventory and group_vars value overrides them.
import type { Vars } from './raw-inventory.ts';

export const KUBESPRAY_DEFAULTS: Vars = {
  // roles/kubespray_defaults/defaults/main/main.yml
  bin_dir: '/usr/local/bin',
  cluster_name: 'cluster.local',
  dns_domain: '{{ cluster_name }}',
  kube_config_dir: '/etc/kubernetes',
  kube_manifest_dir: '{{ kube_config_dir }}/manifests',
  kube_cert_dir: '{{ kube_config_dir }}/ssl',
  kube_service_addresses: '10.233.0.0/18',
  kube_service_addresses_ipv6: 'fd85:ee78:d8a6:8607::1000/116',
  ipv4_stack: true,
  ipv6_stack: '{{ enable_dual_stack_networks | default(false) }}',
  kube_apiserver_bind_address: '::',
  kube_apiserver_port: 6443,
  loadbalancer_apiserver_type: 'nginx',
  nginx_config_dir: '/etc/nginx',
  haproxy_config_dir: '/etc/haproxy',
  k8s_image_pull_policy: 'IfNotPresent',
  kube_vip_enabled: false,
  etcd_cert_dir: '{{ etcd_config_dir }}/ssl',
  // roles/etcd_defaults/defaults/main.yml
  etcd_config_dir: '/etc/ssl/etcd',
  // roles/kubespray_defaults/defaults/main/download.yml
  docker_image_repo: 'docker.io',
  nginx_image_repo: '{{ docker_image_repo }}/library/nginx',
  nginx_image_tag: '1.30.1-alpine',
  haproxy_image_repo: '{{ docker_image_repo }}/library/haproxy',
  haproxy_image_tag: '3.2.19-alpine',
  // roles/kubernetes/node/defaults/main.yml
  loadbalancer_apiserver_memory_requests: '32M',
  loadbalancer_apiserver_cpu_requests: '25m',
  loadbalancer_apiserver_keepalive_timeout: '5m',
  loadbalancer_apiserver_pod_name: "{{ 'nginx-proxy' if loadbalancer_apiserver_type == 'nginx' else 'haproxy' }}",
  // roles/kubespray_defaults/defaults/main/main.yml (kube_proxy_mode), roles/kubernetes/control-plane/defaults/main/kube-proxy.yml
  kube_proxy_mode: 'ipvs',
  kube_proxy_strict_arp: false,
};

/**
 * The kubespray release whose behaviour plan follows. Behaviour changed in:
 * - v2.29.0: kubespray stopped writing /etc/hosts (commit 15c8a4768, "Do not alter etc/hosts", kubespray #12382).
 * - v2.30.0: apiserver_loadbalancer_domain_name defaults to localhost with the local LB, to
 *   loadbalancer_apiserver.address with an external one, and is undefined otherwise (before:
 *   lb-apiserver.kubernetes.local); kube_apiserver_global_endpoint uses loadbalancer_apiserver_port.
 */
export interface KubesprayVersion {
  major: number;
  minor: number;
  label: string;
}

export const CURRENT_KUBESPRAY: KubesprayVersion = { major: 2, minor: 31, label: 'v2.31' };

/** "2.29", "v2.29.1" → the version; undefined for anything else (kubeward matches v2.x only). */
export function parseKubesprayVersion(text: string): KubesprayVersion | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!m || m[1] !== '2') return undefined;
  const minor = Number(m[2]);
  if (minor > 99) return undefined;
  return { major: 2, minor, label: `v2.${minor}${m[3] !== undefined ? `.${m[3]}` : ''}` };
}

/** v2.30.0 and later: the new LB domain name default. */
export function hasLocalhostLbName(v: KubesprayVersion): boolean {
  return v.minor >= 30;
}

/** Before v2.29.0 kubespray wrote inventory hosts and the LB name into /etc/hosts. */
export function writesEtcHosts(v: KubesprayVersion): boolean {
  return v.minor < 29;
}
