// Static pod manifests for the node-local load balancer, shaped like kubespray's nginx-proxy and
// haproxy manifests: hostNetwork, system-node-critical, read-only config from the host, and a
// checksum annotation so that a changed config file recreates the pod.
import type { Inventory } from './inventory.ts';
import type { LbFrontend } from './plan-endpoints.ts';
import { kubewardAdminPort } from './render-kubeward-proxy.ts';
import { formatAddress, quote, sha256 } from './render-text.ts';
import { manifestYaml } from '../manifests/manifest-yaml.ts';
import { DEPLOY_PROXY_OPTIONS, proxyStaticPod } from '../manifests/proxy-static-pod.ts';

interface Mount {
  name: string;
  hostPath: string;
  mountPath: string;
}

interface PodShape {
  podName: string;
  containerName: string;
  image: string;
  mounts: Mount[];
  /** Port of a loopback /healthz, if the LB serves one. */
  healthPort?: number;
}

/**
 * Where the rendered config and the static pod go on the node, relative to "/": the config in
 * nginx_config_dir / haproxy_config_dir, the pod as kube_manifest_dir/nginx-proxy.yml or haproxy.yml
 * (roles/kubernetes/node/tasks/loadbalancer/{nginx-proxy,haproxy}.yml; each of those tasks deletes
 * the other file, so a node never runs both).
 */
export function lbFiles(inv: Inventory): { configPath: string; manifest: string } {
  const rel = (p: string) => p.replace(/^\/+/, '').replace(/\/+$/, '');
  const manifests = rel(inv.manifestDir);
  switch (inv.lbType) {
    case 'nginx':
      return { configPath: `${rel(inv.configDirs.nginx)}/nginx.conf`, manifest: `${manifests}/nginx-proxy.yml` };
    case 'haproxy':
      return { configPath: `${rel(inv.configDirs.haproxy)}/haproxy.cfg`, manifest: `${manifests}/haproxy.yml` };
    case 'kubeward':
      return { configPath: 'etc/kubeward/proxy.yaml', manifest: `${manifests}/kubeward-proxy.yml` };
  }
}

/** The manifests of the other LB types, which must not stay next to this one (they fight for the port). */
export function otherLbManifests(inv: Inventory): string[] {
  const manifests = inv.manifestDir.replace(/\/+$/, '');
  return (['nginx-proxy.yml', 'haproxy.yml', 'kubeward-proxy.yml'] as const)
    .filter((f) => !lbFiles(inv).manifest.endsWith(`/${f}`))
    .map((f) => `${manifests}/${f}`);
}

function shapeOf(inv: Inventory & { lbType: 'nginx' | 'haproxy' }): PodShape {
  const certs: Mount = { name: 'kube-certs', hostPath: inv.certDir, mountPath: inv.certDir };
  const verified = inv.healthcheckCaFile !== '';
  switch (inv.lbType) {
    case 'nginx':
      // roles/kubernetes/node/templates/manifests/nginx-proxy.manifest.j2: container nginx-proxy, nginx_config_dir on /etc/nginx.
      return {
        podName: inv.lbPod.name,
        containerName: 'nginx-proxy',
        image: inv.images.nginx,
        mounts: [{ name: 'etc-nginx', hostPath: inv.configDirs.nginx, mountPath: '/etc/nginx' }],
        healthPort: inv.localLbHealthcheckPort,
      };
    case 'haproxy':
      // roles/kubernetes/node/templates/manifests/haproxy.manifest.j2: container haproxy, haproxy_config_dir on /usr/local/etc/haproxy/.
      return {
        podName: inv.lbPod.name,
        containerName: 'haproxy',
        image: inv.images.haproxy,
        mounts: [{ name: 'etc-haproxy', hostPath: inv.configDirs.haproxy, mountPath: '/usr/local/etc/haproxy' }, ...(verified ? [certs] : [])],
        healthPort: inv.localLbHealthcheckPort,
      };
  }
}

export function renderStaticPod(inv: Inventory, nodeName: string, frontends: LbFrontend[], config: string): string {
  if (inv.lbType === 'kubeward') return renderKubewardPod(inv, nodeName, frontends, config);
  const s = shapeOf({ ...inv, lbType: inv.lbType });
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
    `    - name: ${quote(s.containerName)}`,
    `      image: ${quote(s.image)}`,
    `      imagePullPolicy: ${quote(inv.lbPod.pullPolicy)}`,
  ];
  lines.push('      resources:', '        requests:', `          cpu: ${quote(inv.lbPod.cpuRequests)}`, `          memory: ${quote(inv.lbPod.memoryRequests)}`);
  if (s.healthPort !== undefined) {
    for (const probe of ['livenessProbe', 'readinessProbe']) {
      lines.push(`      ${probe}:`, '        httpGet:', '          host: "127.0.0.1"', '          path: "/healthz"', `          port: ${s.healthPort}`);
    }
  }
  lines.push('      volumeMounts:');
  for (const m of s.mounts) lines.push(`        - name: ${quote(m.name)}`, `          mountPath: ${quote(m.mountPath)}`, '          readOnly: true');
  lines.push('  volumes:');
  for (const m of s.mounts) lines.push(`    - name: ${quote(m.name)}`, '      hostPath:', `        path: ${quote(m.hostPath)}`);
  return lines.join('\n') + '\n';
}

/**
 * The kubeward proxy pod of src/manifests/proxy-static-pod.ts (deploy/proxy/static-pod.yaml) with
 * this inventory's name, image, requests, admin port, listen addresses and certificate directories.
 */
function renderKubewardPod(inv: Inventory, nodeName: string, frontends: LbFrontend[], config: string): string {
  const certDirs = [
    ...(inv.healthcheckCaFile !== '' ? [{ name: 'kube-certs', path: inv.certDir }] : []),
    ...(frontends.some((f) => f.name === 'etcd') ? [{ name: 'etcd-certs', path: inv.etcdCertDir }] : []),
  ];
  const pod = proxyStaticPod({
    name: inv.lbPod.name,
    labels: { 'addonmanager.kubernetes.io/mode': 'Reconcile', ...DEPLOY_PROXY_OPTIONS.labels },
    annotations: { 'kubeward.io/config-checksum': sha256(config) },
    image: inv.images.kubeward,
    pullPolicy: inv.lbPod.pullPolicy,
    requests: { cpu: inv.lbPod.cpuRequests, memory: inv.lbPod.memoryRequests },
    adminPort: kubewardAdminPort(inv),
    listen: frontends.flatMap((f) => f.listen.map((l) => formatAddress(l, f.port))),
    certDirs,
  });
  return manifestYaml([`Static pod for the node-local kubeward load balancer on ${nodeName}, rendered by kubeward plan.`], pod);
}
