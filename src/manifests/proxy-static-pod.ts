// The kubeward proxy static pod: the one definition behind deploy/proxy/static-pod.yaml, the pod
// `kubeward plan render` writes per node, and the snippet in docs/proxy.md. Every form carries the
// upgrade hand-over: kubelet starts a changed static pod while the old one still terminates; the new
// one takes the old one's listening sockets over --handover-socket (docs/design/listener-handover.md)
// and the old one's preStop hook waits until it has let go of them.
import { KUBEWARD_IMAGE } from './kubeward-image.ts';
import { awaitSuccessorHook, HANDOVER_WAIT_S, PROXY_HANDOVER_SOCKET } from './handover-parts.ts';
import { ADMIN_TOKEN_DIR, adminTokenArg, containerSecurity, hostPathVolume, httpProbe, POD_SECURITY, volumeMount, type HostMount } from './pod-parts.ts';

/** How long the old pod drains its connections after the hand-over (it bounds the grace with HANDOVER_WAIT_S). */
export const SHUTDOWN_GRACE_S = 20;

export interface ProxyPodOptions {
  name: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  image: string;
  pullPolicy: string;
  requests: { cpu: string; memory: string };
  adminPort: number;
  /** Every listen address of the config ("127.0.0.1:6443"): the preStop hook waits for each. */
  listen: string[];
  /** Host directories the config names (certificates), mounted read-only at the same path. */
  certDirs: { name: string; path: string }[];
}

/** The defaults of deploy/proxy: kubespray's paths, the image the build tags. */
export const DEPLOY_PROXY_OPTIONS: ProxyPodOptions = {
  name: 'kubeward-proxy',
  labels: { 'k8s-app': 'kube-kubeward', 'app.kubernetes.io/name': 'kubeward-proxy' },
  image: KUBEWARD_IMAGE,
  pullPolicy: 'IfNotPresent',
  requests: { cpu: '25m', memory: '64Mi' },
  adminPort: 9452,
  listen: ['127.0.0.1:6443'],
  certDirs: [{ name: 'certs', path: '/etc/kubernetes/ssl' }],
};

/** /etc/kubeward on the host holds proxy.yaml; /var/lib/kubeward discovery's cache (owned by 65532). */
const CONFIG: HostMount = { name: 'config', hostPath: '/etc/kubeward', mountPath: '/etc/kubeward', readOnly: true, type: 'Directory' };
const STATE: HostMount = { name: 'state', hostPath: '/var/lib/kubeward', mountPath: '/var/lib/kubeward', type: 'DirectoryOrCreate' };

export function proxyStaticPod(o: ProxyPodOptions): Record<string, unknown> {
  const mounts: HostMount[] = [
    CONFIG,
    ...o.certDirs.map((d) => ({ name: d.name, hostPath: d.path, mountPath: d.path, readOnly: true, type: 'Directory' })),
    STATE,
    ADMIN_TOKEN_DIR,
  ];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: o.name, namespace: 'kube-system', labels: o.labels, ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      hostNetwork: true,
      dnsPolicy: 'ClusterFirstWithHostNet',
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      priorityClassName: 'system-node-critical',
      // the preStop wait, then the drain, then a margin
      terminationGracePeriodSeconds: HANDOVER_WAIT_S + SHUTDOWN_GRACE_S + 10,
      securityContext: POD_SECURITY,
      containers: [
        {
          name: 'kubeward-proxy',
          image: o.image,
          imagePullPolicy: o.pullPolicy,
          args: [
            'proxy',
            '--config=/etc/kubeward/proxy.yaml',
            `--handover-socket=${PROXY_HANDOVER_SOCKET}`,
            `--shutdown-grace=${SHUTDOWN_GRACE_S}s`,
            adminTokenArg('proxy'),
          ],
          lifecycle: awaitSuccessorHook(o.listen),
          resources: { requests: o.requests },
          livenessProbe: httpProbe(o.adminPort, '/healthz', 10),
          readinessProbe: httpProbe(o.adminPort, '/readyz', 5),
          securityContext: containerSecurity('image'),
          volumeMounts: mounts.map(volumeMount),
        },
      ],
      volumes: mounts.map(hostPathVolume),
    },
  };
}
