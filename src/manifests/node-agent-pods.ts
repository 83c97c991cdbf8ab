// kubeward watch and routes on the control-plane nodes: the two static pods (deploy/watch,
// deploy/routes) and the DaemonSet that runs both (deploy/node-agents), from one container
// definition each.
import { KUBEWARD_IMAGE } from './kubeward-image.ts';
import {
  ADMIN_TOKEN_DIR,
  adminTokenArg,
  CLOUD_ROUTES,
  CLOUD_ROUTES_HEARTBEAT,
  CLUSTER_CA,
  containerSecurity,
  hostPathVolume,
  httpProbe,
  POD_SECURITY,
  volumeMount,
  XTABLES_LOCK,
  type HostMount,
} from './pod-parts.ts';

interface AgentContainer {
  container: Record<string, unknown>;
  mounts: HostMount[];
}

/**
 * watch: root without capabilities. It writes the host's /run/cloud-routes, which kubelet creates
 * root-owned (hostPath DirectoryOrCreate); nothing else of the host is mounted writable.
 */
export function watchContainer(): AgentContainer {
  const mounts = [CLOUD_ROUTES, CLOUD_ROUTES_HEARTBEAT, CLUSTER_CA, ADMIN_TOKEN_DIR];
  return {
    mounts,
    container: {
      name: 'watch',
      image: KUBEWARD_IMAGE,
      imagePullPolicy: 'IfNotPresent',
      args: [
        'watch',
        '--vip-from-dns=api-int.cluster.example.com',
        '--ca-file=/etc/kubernetes/pki/ca.crt',
        '--state-dir=/run/cloud-routes',
        '--admin-address=127.0.0.1:9450',
        adminTokenArg('watch'),
      ],
      resources: { requests: { cpu: '10m', memory: '40Mi' } },
      livenessProbe: httpProbe(9450, '/healthz', 10),
      securityContext: containerSecurity('root'),
      volumeMounts: mounts.map(volumeMount),
    },
  };
}

/**
 * routes: root with NET_ADMIN alone, which nftables (and iptables-nft) need for their netlink
 * calls; NET_RAW only matters to legacy iptables, which the image does not run by default.
 */
export function routesContainer(): AgentContainer {
  const mounts = [CLOUD_ROUTES, CLOUD_ROUTES_HEARTBEAT, XTABLES_LOCK, ADMIN_TOKEN_DIR];
  return {
    mounts,
    container: {
      name: 'routes',
      image: KUBEWARD_IMAGE,
      imagePullPolicy: 'IfNotPresent',
      args: ['routes', '--provider=azure', '--state-dir=/run/cloud-routes', '--admin-address=127.0.0.1:9451', adminTokenArg('routes')],
      resources: { requests: { cpu: '10m', memory: '48Mi' } },
      livenessProbe: httpProbe(9451, '/healthz', 10),
      securityContext: containerSecurity('root', ['NET_ADMIN']),
      volumeMounts: mounts.map(volumeMount),
    },
  };
}

function uniqueVolumes(mounts: HostMount[]): Record<string, unknown>[] {
  const seen = new Map(mounts.map((m) => [m.name, m]));
  return [...seen.values()].map(hostPathVolume);
}

function podSpec(parts: AgentContainer[]): Record<string, unknown> {
  return {
    hostNetwork: true,
    priorityClassName: 'system-node-critical',
    terminationGracePeriodSeconds: 30,
    tolerations: [{ operator: 'Exists' }],
    securityContext: POD_SECURITY,
    containers: parts.map((p) => p.container),
    volumes: uniqueVolumes(parts.flatMap((p) => p.mounts)),
  };
}

export function nodeAgentStaticPod(mode: 'watch' | 'routes'): Record<string, unknown> {
  const part = mode === 'watch' ? watchContainer() : routesContainer();
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `kubeward-${mode}`, namespace: 'kube-system', labels: { 'app.kubernetes.io/name': `kubeward-${mode}` } },
    spec: podSpec([part]),
  };
}

export function nodeAgentsDaemonSet(): Record<string, unknown> {
  const labels = { 'app.kubernetes.io/name': 'kubeward-node-agents' };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'kubeward-node-agents', namespace: 'kube-system', labels },
    spec: {
      selector: { matchLabels: labels },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
      template: {
        metadata: { labels },
        spec: { ...podSpec([watchContainer(), routesContainer()]), nodeSelector: { 'node-role.kubernetes.io/control-plane': '' } },
      },
    },
  };
}
