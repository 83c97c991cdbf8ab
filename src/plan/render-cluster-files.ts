// The small per-cluster and per-node files: /etc/hosts lines (kubespray's 0090-etchosts.yml),
// each node's kubeconfig server URLs and etcd endpoints, and a MetalLB Service for the VIP.
import { isIP } from 'node:net';
import { isClusterNode, type Inventory } from './inventory.ts';
import { writesEtcHosts } from './kubespray-defaults.ts';
import type { NodePlan } from './plan-endpoints.ts';
import { formatAddress, quote } from './render-text.ts';

/**
 * Lines to add to /etc/hosts on every node, for kubespray before v2.29.0 only
 * (roles/kubernetes/preinstall/tasks/0090-etchosts.yml, removed by "Do not alter etc/hosts",
 * kubespray #12382); undefined when there is nothing to add.
 */
export function renderEtcHosts(inv: Inventory): string | undefined {
  if (!writesEtcHosts(inv.kubespray)) return undefined;
  const lines = [`# /etc/hosts lines for every node, rendered by kubeward plan (kubespray ${inv.kubespray.label} wrote them; v2.29.0 and later write none).`];
  const name = inv.lbDomainName;
  if (inv.externalLb?.address !== undefined && name !== undefined && name !== 'localhost' && isIP(name) === 0) {
    lines.push('# The apiserver load balancer name (apiserver_loadbalancer_domain_name):');
    lines.push(`${inv.externalLb.address} ${name}`);
  }
  if (inv.populateHostsFile) {
    lines.push('# Inventory hosts (populate_inventory_to_hosts_file), by access_ip or ip:');
    for (const h of inv.hosts) if (isClusterNode(h) || h.etcd) lines.push(`${h.accessIp} ${h.name}.${inv.dnsDomain} ${h.name}`);
  }
  return lines.length > 1 ? lines.join('\n') + '\n' : undefined;
}

/** The server: URL of each of the node's kubeconfigs and its etcd endpoints, with the reasons. */
export function renderNodeEndpoints(node: NodePlan): string {
  const lines = [
    `# Apiserver and etcd endpoints for ${node.name} (${node.roles.join(', ')}), rendered by kubeward plan.`,
    '# "server" is the server: URL of that component\'s kubeconfig; etcd "servers" is the --etcd-servers form.',
    `node: ${quote(node.name)}`,
  ];
  for (const e of node.endpoints) {
    lines.push(`${quote(e.component)}:`);
    lines.push(`  ${e.component === 'etcd-clients' ? 'servers' : 'server'}: ${quote(e.url)}`);
    lines.push(`  reason: ${quote(e.reason)}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * The MetalLB layout: a LoadBalancer Service that MetalLB announces on the VIP, in front of the
 * kubeadm apiserver static pods (labels component=kube-apiserver, tier=control-plane), for clients
 * outside the cluster. Nodes keep using the node-local load balancer, since MetalLB and kube-proxy
 * themselves need the apiserver before the VIP exists. Rendered only for kubeward_vip_provider: metallb.
 */
export function renderMetallbService(inv: Inventory): string | undefined {
  const lb = inv.externalLb;
  if (lb?.provider !== 'metallb' || lb.address === undefined) return undefined;
  const ipvs = inv.kubeProxy.mode === 'ipvs';
  return [
    `# MetalLB LoadBalancer Service exposing the apiservers on ${formatAddress(lb.address, lb.port)}, rendered by kubeward plan.`,
    '# For clients outside the cluster; every node reaches the apiserver through its node-local load',
    '# balancer, which works before this Service (and MetalLB, and kube-proxy) can.',
    '# Prerequisites:',
    `# - ${lb.address} lies in a MetalLB IPAddressPool${lb.addressPool !== undefined ? ` (${lb.addressPool}, named below)` : ''} with an L2Advertisement or BGPAdvertisement for it.`,
    ipvs
      ? `# - kube_proxy_mode is ipvs: layer-2 mode needs kube_proxy_strict_arp: true (strictARP in kube-proxy's config); it is ${inv.kubeProxy.strictArp ? 'true' : 'FALSE, set it'}.`
      : `# - kube_proxy_mode is ${inv.kubeProxy.mode}: no strict ARP setting is needed.`,
    lb.loadBalancerClass !== undefined
      ? `# - MetalLB runs with --lb-class=${lb.loadBalancerClass} (spec.loadBalancerClass below).`
      : '# - MetalLB handles Services without a loadBalancerClass (set kubeward_metallb_load_balancer_class if it runs with --lb-class).',
    `# - The apiserver certificate has ${lb.address} as a SAN (it is in cluster/apiserver-sans.txt).`,
    '# Both annotation spellings: metallb.io (MetalLB 0.14+) and metallb.universe.tf (older releases).',
    'apiVersion: v1',
    'kind: Service',
    'metadata:',
    '  name: "kube-apiserver-vip"',
    '  namespace: "kube-system"',
    '  annotations:',
    `    metallb.io/loadBalancerIPs: ${quote(lb.address)}`,
    `    metallb.universe.tf/loadBalancerIPs: ${quote(lb.address)}`,
    ...(lb.addressPool !== undefined
      ? [`    metallb.io/address-pool: ${quote(lb.addressPool)}`, `    metallb.universe.tf/address-pool: ${quote(lb.addressPool)}`]
      : []),
    'spec:',
    '  type: "LoadBalancer"',
    ...(lb.loadBalancerClass !== undefined ? [`  loadBalancerClass: ${quote(lb.loadBalancerClass)}`] : []),
    '  externalTrafficPolicy: "Cluster"',
    '  selector:',
    '    component: "kube-apiserver"',
    '    tier: "control-plane"',
    '  ports:',
    '    - name: "https"',
    '      protocol: "TCP"',
    `      port: ${lb.port}`,
    `      targetPort: ${inv.apiserverPort}`,
    '',
  ].join('\n');
}
