// `kubeward proxy --config` file for a node-local load balancer, in the schema of
// src/proxy/proxy-config.ts: apiserver upstreams checked with verified GET /readyz, etcd members
// with GET /health using the node's etcd client certificate (etcd refuses TLS without one).
import type { Inventory } from './inventory.ts';
import type { LbFrontend, NodePlan } from './plan-endpoints.ts';
import { formatAddress, quote } from './render-text.ts';

/** kubeward proxy's default admin port, used when the inventory sets no health-check port. */
export const KUBEWARD_PROXY_ADMIN_PORT = 9452;

export function kubewardAdminPort(inv: Inventory): number {
  return inv.localLbHealthcheckPort ?? KUBEWARD_PROXY_ADMIN_PORT;
}

export function renderKubewardProxyConfig(inv: Inventory, node: NodePlan, frontends: LbFrontend[]): string {
  const lines = [
    `# kubeward proxy config for ${node.name}, rendered by kubeward plan; do not edit.`,
    '# Admin listener: /healthz (process), /readyz (an upstream is healthy), /metrics, /status.',
    `adminAddress: ${quote(`127.0.0.1:${kubewardAdminPort(inv)}`)}`,
    'logFormat: json',
    'frontends:',
  ];
  for (const f of frontends) {
    lines.push(`  - name: ${f.name}`, '    listen:');
    for (const l of f.listen) lines.push(`      - ${quote(formatAddress(l, f.port))}`);
    lines.push('    upstreams:');
    for (const u of f.upstreams) lines.push(`      - ${quote(formatAddress(u.host, u.port))}  # ${u.name}`);
    lines.push('    healthCheck:', ...healthCheckLines(inv, node, f));
    lines.push('    connectTimeout: 1s', '    idleTimeout: 10m');
  }
  return lines.join('\n') + '\n';
}

function healthCheckLines(inv: Inventory, node: NodePlan, f: LbFrontend): string[] {
  if (f.name === 'etcd') {
    const dir = inv.etcdCertDir;
    return [
      '      type: readyz',
      '      path: /health',
      `      caFile: ${quote(`${dir}/ca.pem`)}`,
      `      clientCert: ${quote(`${dir}/node-${node.name}.pem`)}`,
      `      clientKey: ${quote(`${dir}/node-${node.name}-key.pem`)}`,
    ];
  }
  const lines = ['      type: readyz', '      path: /readyz'];
  if (inv.healthcheckCaFile === '') lines.push('      insecureSkipTlsVerify: true');
  else lines.push(`      caFile: ${quote(inv.healthcheckCaFile)}`);
  return lines;
}
