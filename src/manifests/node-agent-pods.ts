// kubeward watch and routes on the control-plane nodes: the two static pods (deploy/watch,
// deploy/routes) and the DaemonSet that runs both (deploy/node-agents), from one container
// definition each. Each container hands its admin listener to its successor on an upgrade
// (--handover-socket, preStop await-successor): the old watcher then leaves its VIP files and the
// old routes its rules to the new one, instead of publishing down and withdrawing them in between.
import { KUBEWARD_IMAGE } from './kubeward-image.ts';
import { awaitSuccessorHook, HANDOVER_WAIT_S, rootHandover } from './handover-parts.ts';
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
  const handover = rootHandover('watch');
  const mounts = [CLOUD_ROUTES, CLOUD_ROUTES_HEARTBEAT, CLUSTER_CA, handover.mount, ADMIN_TOKEN_DIR];
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
        handover.arg,
        adminTokenArg('watch'),
      ],
      lifecycle: awaitSuccessorHook(['127.0.0.1:9450']),
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
  const handover = rootHandover('routes');
  const mounts = [CLOUD_ROUTES, CLOUD_ROUTES_HEARTBEAT, XTABLES_LOCK, handover.mount, ADMIN_TOKEN_DIR];
  return {
    mounts,
    container: {
      name: 'routes',
      image: KUBEWARD_IMAGE,
      imagePullPolicy: 'IfNotPresent',
      args: ['routes', '--provider=azure', '--state-dir=/run/cloud-routes', '--admin-address=127.0.0.1:9451', handover.arg, adminTokenArg('routes')],
      lifecycle: awaitSuccessorHook(['127.0.0.1:9451']),
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
    // the preStop wait, then the shutdown steps (watch: its last probe and the files, 10 s; routes: 15 s)
    terminationGracePeriodSeconds: HANDOVER_WAIT_S + 20,
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
      // The new pod starts beside the old one (Kubernetes 1.22 and later) and takes its listeners;
      // deleting the old one first would leave nothing to hand over to.
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels },
        spec: { ...podSpec([watchContainer(), routesContainer()]), nodeSelector: { 'node-role.kubernetes.io/control-plane': '' } },
      },
    },
  };
}
