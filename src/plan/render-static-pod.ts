// Static pod manifests for the node-local load balancer, shaped like kubespray's nginx-proxy and
// haproxy manifests: hostNetwork, system-node-critical, read-only config from the host, and a
// checksum annotation so that a changed config file recreates the pod.
import type { Inventory, LbType } from './inventory.ts';
import type { LbFrontend } from './plan-endpoints.ts';
import { kubewardAdminPort } from './render-kubeward-proxy.ts';
import { quote, sha256 } from './render-text.ts';

interface Mount {
  name: string;
  hostPath: string;
  mountPath: string;
}

interface PodShape {
  podName: string;
  image: string;
  command?: string[];
  mounts: Mount[];
  /** Port of a loopback /healthz, if the LB serves one. */
  healthPort?: number;
}

/** Where the rendered config goes on the node, and the pod's file name in the manifest dir. */
export const LB_FILES: Record<LbType, { configPath: string; manifest: string }> = {
  nginx: { configPath: 'etc/nginx/nginx.conf', manifest: 'etc/kubernetes/manifests/nginx-proxy.yaml' },
  haproxy: { configPath: 'etc/haproxy/haproxy.cfg', manifest: 'etc/kubernetes/manifests/haproxy.yaml' },
  kubeward: { configPath: 'etc/kubeward/proxy.yaml', manifest: 'etc/kubernetes/manifests/kubeward-proxy.yaml' },
};

function shapeOf(inv: Inventory, frontends: LbFrontend[]): PodShape {
  const certs: Mount = { name: 'kube-certs', hostPath: inv.certDir, mountPath: inv.certDir };
  const etcdCerts: Mount = { name: 'etcd-certs', hostPath: inv.etcdCertDir, mountPath: inv.etcdCertDir };
  const verified = inv.healthcheckCaFile !== '';
  switch (inv.lbType) {
    case 'nginx':
      return { podName: 'nginx-proxy', image: inv.images.nginx, mounts: [{ name: 'etc-nginx', hostPath: '/etc/nginx', mountPath: '/etc/nginx' }], healthPort: inv.localLbHealthcheckPort };
    case 'haproxy':
      return {
        podName: 'haproxy',
        image: inv.images.haproxy,
        mounts: [{ name: 'etc-haproxy', hostPath: '/etc/haproxy', mountPath: '/usr/local/etc/haproxy' }, ...(verified ? [certs] : [])],
        healthPort: inv.localLbHealthcheckPort,
      };
    case 'kubeward':
      return {
        podName: 'kubeward-proxy',
        image: inv.images.kubeward,
        command: ['kubeward', 'proxy', '--config', '/etc/kubeward/proxy.yaml'],
        mounts: [
          { name: 'etc-kubeward', hostPath: '/etc/kubeward', mountPath: '/etc/kubeward' },
          ...(verified ? [certs] : []),
          ...(frontends.some((f) => f.name === 'etcd') ? [etcdCerts] : []),
        ],
        healthPort: kubewardAdminPort(inv),
      };
  }
}

export function renderStaticPod(inv: Inventory, nodeName: string, frontends: LbFrontend[], config: string): string {
  const s = shapeOf(inv, frontends);
  const lines = [
    `# Static pod for the node-local ${inv.lbType} load balancer on ${nodeName}, rendered by kubeward plan.`,
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    `  name: ${quote(s.podName)}`,
    '  namespace: "kube-system"',
    '  labels:',
    '    addonmanager.kubernetes.io/mode: "Reconcile"',
    `    k8s-app: ${quote(`kube-${inv.lbType}`)}`,
    '  annotations:',
    `    kubeward.io/config-checksum: ${quote(sha256(config))}`,
    'spec:',
    '  hostNetwork: true',
    '  dnsPolicy: "ClusterFirstWithHostNet"',
    '  nodeSelector:',
    '    kubernetes.io/os: "linux"',
    '  priorityClassName: "system-node-critical"',
    '  containers:',
    `    - name: ${quote(s.podName)}`,
    `      image: ${quote(s.image)}`,
    '      imagePullPolicy: "IfNotPresent"',
  ];
  if (s.command) lines.push(`      command: [${s.command.map(quote).join(', ')}]`);
  lines.push('      resources:', '        requests:', '          cpu: "25m"', '          memory: "32M"');
  if (s.healthPort !== undefined) {
    for (const probe of ['livenessProbe', 'readinessProbe']) {
      const path = probe === 'readinessProbe' && inv.lbType === 'kubeward' ? '/readyz' : '/healthz';
      lines.push(`      ${probe}:`, '        httpGet:', '          host: "127.0.0.1"', `          path: ${quote(path)}`, `          port: ${s.healthPort}`);
    }
  }
  lines.push('      volumeMounts:');
  for (const m of s.mounts) lines.push(`        - name: ${quote(m.name)}`, `          mountPath: ${quote(m.mountPath)}`, '          readOnly: true');
  lines.push('  volumes:');
  for (const m of s.mounts) lines.push(`    - name: ${quote(m.name)}`, '      hostPath:', `        path: ${quote(m.hostPath)}`);
  return lines.join('\n') + '\n';
}
