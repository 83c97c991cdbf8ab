// HAProxy configs: the node-local load balancer and the external one for a VIP. Both check
// apiservers with a real TLS handshake and GET /readyz, verified against the cluster CA when one is
// configured. /readyz (not kubespray's /healthz) turns 503 as soon as an apiserver starts a graceful
// shutdown, so HAProxy drains it in time; ssl-hello-chk is avoided because the apiserver rejects its
// SSLv3 hello (kubernetes #70411).
import type { Inventory } from './inventory.ts';
import type { LbFrontend, LbUpstream, NodePlan } from './plan-endpoints.ts';
import { formatAddress } from './render-text.ts';

const GLOBAL_AND_DEFAULTS = [
  'global',
  '    maxconn 4000',
  '    log stdout format raw local0',
  '',
  'defaults',
  '    mode tcp',
  '    log global',
  '    option tcplog',
  '    option dontlognull',
  '    # A refused or timed-out connect is retried at once on another server (nginx-like).',
  '    option redispatch 1',
  '    retries 2',
  '    timeout connect 1s',
  '    timeout check 2s',
  '    timeout queue 5s',
];

/** The check options for apiservers: `verify none` only when no CA file is configured. */
function apiserverCheck(caFile: string): string {
  return caFile === '' ? 'check check-ssl verify none' : `check check-ssl verify required ca-file ${caFile}`;
}

function backendLines(name: string, upstreams: LbUpstream[], kind: 'apiserver' | 'etcd', caFile: string): string[] {
  const lines = [`backend ${name}`, '    balance leastconn'];
  if (kind === 'apiserver') lines.push('    option httpchk GET /readyz', '    http-check expect status 200');
  // Connections to a server marked down are closed so their clients reconnect through a healthy one.
  lines.push('    default-server inter 2s fastinter 1s downinter 2s rise 2 fall 2 slowstart 30s maxconn 1000 maxqueue 256 on-marked-down shutdown-sessions');
  // etcd requires a client certificate for any TLS handshake; HAProxy wants certificate and key in one
  // file, which kubespray's etcd certificates are not, so etcd members get a connect check.
  const check = kind === 'apiserver' ? apiserverCheck(caFile) : 'check';
  for (const u of upstreams) lines.push(`    server ${u.name} ${formatAddress(u.host, u.port)} ${check}`);
  return lines;
}

export function renderLocalHaproxyConfig(inv: Inventory, node: NodePlan, frontends: LbFrontend[]): string {
  const lines = [
    `# HAProxy node-local load balancer for ${node.name}, rendered by kubeward plan; do not edit.`,
    ...GLOBAL_AND_DEFAULTS,
    "    # loadbalancer_apiserver_keepalive_timeout, as kubespray's haproxy.cfg.j2; client-go pings idle",
    '    # HTTP/2 connections every 30s, so this only ends truly dead ones.',
    `    timeout client ${inv.lbPod.keepaliveTimeout}`,
    '    timeout server 10m',
  ];
  if (inv.localLbHealthcheckPort !== undefined) {
    lines.push('', '# /healthz says HAProxy is running (what a liveness probe needs), not that a server is up.');
    lines.push('frontend healthz', `    bind 127.0.0.1:${inv.localLbHealthcheckPort}`, '    mode http', '    monitor-uri /healthz');
  }
  for (const f of frontends) {
    const backend = f.name === 'apiserver' ? 'kube_api_backend' : 'etcd_backend';
    lines.push('', `frontend ${f.name === 'apiserver' ? 'kube_api_frontend' : 'etcd_frontend'}`);
    for (const l of f.listen) lines.push(`    bind ${formatAddress(l, f.port)}`);
    lines.push(`    default_backend ${backend}`, '', ...backendLines(backend, f.upstreams, f.name, inv.healthcheckCaFile));
  }
  return lines.join('\n') + '\n';
}

/** Where the external HAProxy expects the cluster CA; it runs on load balancer hosts, not nodes. */
export const EXTERNAL_HAPROXY_CA_FILE = '/etc/haproxy/kubernetes-ca.crt';

export function renderExternalHaproxyConfig(inv: Inventory, upstreams: LbUpstream[]): string {
  const lb = inv.externalLb!;
  const caFile = inv.healthcheckCaFile === '' ? '' : EXTERNAL_HAPROXY_CA_FILE;
  const bind = lb.address !== undefined ? formatAddress(lb.address, lb.port) : `:${lb.port}`;
  const lines = [
    `# External HAProxy for ${inv.lbDomainName ?? lb.address ?? 'the apiserver'} (${bind}), rendered by kubeward plan; do not edit.`,
    '# Run it on the load balancer hosts that hold the VIP (keepalived or similar); to start it on a',
    '# host that does not hold the VIP yet, set net.ipv4.ip_nonlocal_bind=1.',
    caFile === ''
      ? '# Checks do not verify certificates (kubeward_healthcheck_ca_file is "").'
      : `# Copy the cluster CA (ca.crt) to ${caFile} for verified checks.`,
    ...GLOBAL_AND_DEFAULTS,
    '    # kubectl logs -f and exec can sit idle for a long time; client-go connections ping every 30s.',
    '    timeout client 1h',
    '    timeout server 1h',
    '',
    'frontend kube_apiserver_vip',
    `    bind ${bind}`,
    '    default_backend kube_apiservers',
    '',
    ...backendLines('kube_apiservers', upstreams, 'apiserver', caFile),
  ];
  return lines.join('\n') + '\n';
}
