// nginx stream config for a node-local load balancer: kubespray's nginx-proxy settings (least_conn,
// 1s connect timeout, 10m proxy timeout, passive checks only) plus a shared zone, so connection
// counts and failure marks are kept across both worker processes rather than per worker.
import type { Inventory } from './inventory.ts';
import type { LbFrontend, NodePlan } from './plan-endpoints.ts';
import { formatAddress } from './render-text.ts';

export function renderNginxConfig(inv: Inventory, node: NodePlan, frontends: LbFrontend[]): string {
  const lines = [
    `# nginx node-local load balancer for ${node.name}, rendered by kubeward plan; do not edit.`,
    '# Passive health only (open-source nginx has no active checks): a refused or timed-out connect',
    '# marks the server failed for 10s and the connection is retried on the next server.',
    'error_log stderr notice;',
    '',
    'worker_processes 2;',
    'worker_rlimit_nofile 130048;',
    'worker_shutdown_timeout 10s;',
    '',
    'events {',
    '  multi_accept on;',
    '  use epoll;',
    '  worker_connections 16384;',
    '}',
    '',
    'stream {',
  ];
  for (const f of frontends) {
    const upstream = f.name === 'apiserver' ? 'kube_apiserver' : 'etcd';
    lines.push(`  upstream ${upstream} {`, `    zone ${upstream} 64k;`, '    least_conn;');
    for (const u of f.upstreams) lines.push(`    server ${formatAddress(u.host, u.port)};  # ${u.name}`);
    lines.push('  }', '', '  server {');
    for (const l of f.listen) lines.push(`    listen ${formatAddress(l, f.port)};`);
    lines.push(`    proxy_pass ${upstream};`, '    proxy_timeout 10m;', '    proxy_connect_timeout 1s;', '  }', '');
  }
  lines.pop();
  lines.push('}');
  if (inv.localLbHealthcheckPort !== undefined) {
    lines.push(
      '',
      '# /healthz says nginx is running, not that a server is healthy (that is what liveness needs).',
      'http {',
      '  server_tokens off;',
      '  access_log off;',
      `  keepalive_timeout ${inv.lbPod.keepaliveTimeout};`,
      '  server {',
      `    listen 127.0.0.1:${inv.localLbHealthcheckPort};`,
      '    location /healthz {',
      '      return 200;',
      '    }',
      '    location /stub_status {',
      '      stub_status;',
      '    }',
      '  }',
      '}',
    );
  }
  return lines.join('\n') + '\n';
}
