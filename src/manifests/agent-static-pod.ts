// The kubeward agent static pod (deploy/agent/static-pod.yaml): proxy, watch and routes in one
// process, so it needs the union of their privileges: root (watch writes the root-owned
// /run/cloud-routes) and NET_ADMIN (routes programs nftables), nothing else. Upgrades hand the
// listening sockets over as the proxy pod does (--handover-socket, preStop await-successor); the
// hook waits on the admin address, which the probes fix at 127.0.0.1:9456 and which is handed over
// in the same step as the proxy section's listeners (the old agent lets go of all of them at once).
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

const CONFIG: HostMount = { name: 'config', hostPath: '/etc/kubeward/agent.yaml', mountPath: '/etc/kubeward/agent.yaml', readOnly: true, type: 'File' };
const STATE: HostMount = { name: 'state', hostPath: '/var/lib/kubeward', mountPath: '/var/lib/kubeward', type: 'DirectoryOrCreate' };

export function agentStaticPod(): Record<string, unknown> {
  const handover = rootHandover('agent');
  const mounts = [CONFIG, CLOUD_ROUTES, CLOUD_ROUTES_HEARTBEAT, CLUSTER_CA, XTABLES_LOCK, STATE, handover.mount, ADMIN_TOKEN_DIR];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'kubeward-agent', namespace: 'kube-system', labels: { 'app.kubernetes.io/name': 'kubeward-agent' } },
    spec: {
      hostNetwork: true,
      priorityClassName: 'system-node-critical',
      // the preStop wait, then the proxy's shutdownGrace (30 s by default) plus the watcher's and routes' steps
      terminationGracePeriodSeconds: HANDOVER_WAIT_S + 45,
      tolerations: [{ operator: 'Exists' }],
      securityContext: POD_SECURITY,
      containers: [
        {
          name: 'agent',
          image: KUBEWARD_IMAGE,
          imagePullPolicy: 'IfNotPresent',
          args: ['agent', '--config=/etc/kubeward/agent.yaml', handover.arg, adminTokenArg('agent')],
          lifecycle: awaitSuccessorHook(['127.0.0.1:9456']),
          // At rest with proxy + watch + routes about 70 MiB RSS, most of it the Node binary's
          // shared pages; the request covers the private part.
          resources: { requests: { cpu: '20m', memory: '48Mi' } },
          livenessProbe: httpProbe(9456, '/healthz', 10),
          readinessProbe: httpProbe(9456, '/readyz', 5),
          securityContext: containerSecurity('root', ['NET_ADMIN']),
          volumeMounts: mounts.map(volumeMount),
        },
      ],
      volumes: mounts.map(hostPathVolume),
    },
  };
}
