// The small per-cluster and per-node files: /etc/hosts lines (kubespray's 0090-etchosts.yml),
// each node's kubeconfig server URLs and etcd endpoints, and a MetalLB Service for the VIP.
import { isClusterNode, type Inventory } from './inventory.ts';
import type { NodePlan } from './plan-endpoints.ts';
import { formatAddress, quote } from './render-text.ts';

/** Lines to add to /etc/hosts on every node; undefined when there is nothing to add. */
export function renderEtcHosts(inv: Inventory): string | undefined {
  const lines = ['# /etc/hosts lines for every node, rendered by kubeward plan.'];
  if (inv.externalLb?.address !== undefined) {
    lines.push('# The apiserver load balancer name (apiserver_loadbalancer_domain_name):');
    lines.push(`${inv.externalLb.address} ${inv.lbDomainName}`);
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
 * A LoadBalancer Service that MetalLB announces on the VIP, in front of the kubeadm apiserver static
 * pods (labels component=kube-apiserver, tier=control-plane). Only pods whose readiness probe
 * passes become endpoints. It serves clients outside the cluster: nodes still need the node-local
 * or external path to bootstrap, since MetalLB and kube-proxy themselves depend on the apiserver.
 */
export function renderMetallbService(inv: Inventory): string | undefined {
  const lb = inv.externalLb;
  if (lb?.address === undefined) return undefined;
  return [
    `# MetalLB LoadBalancer Service exposing the apiservers on ${formatAddress(lb.address, lb.port)}, rendered by kubeward plan.`,
    '# Both annotation spellings: metallb.io (MetalLB 0.14+) and metallb.universe.tf (older releases).',
    'apiVersion: v1',
    'kind: Service',
    'metadata:',
    '  name: "kube-apiserver-vip"',
    '  namespace: "kube-system"',
    '  annotations:',
    `    metallb.io/loadBalancerIPs: ${quote(lb.address)}`,
    `    metallb.universe.tf/loadBalancerIPs: ${quote(lb.address)}`,
    'spec:',
    '  type: "LoadBalancer"',
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
