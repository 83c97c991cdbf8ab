// The pieces every kubeward node manifest is built from: host paths, probes and the two security
// contexts (non-root without capabilities, or root with only the capabilities the kernel asks for).
// Plain objects, serialised by manifest-yaml.ts.

export interface HostMount {
  name: string;
  hostPath: string;
  mountPath: string;
  readOnly?: boolean;
  /** hostPath type: Directory, DirectoryOrCreate, File, FileOrCreate. */
  type?: string;
  /** Not a host path: a memory-backed emptyDir of the pod's own (hostPath is then unused). */
  emptyDir?: boolean;
}

/** The non-root identity of the image (user 65532, "kubeward" in the image's /etc/passwd). */
export const IMAGE_UID = 65532;

/** Linux capabilities a container may add; only what a mode's kernel calls need. */
export type Capability = 'NET_ADMIN';

export function volumeMount(m: HostMount): Record<string, unknown> {
  return { name: m.name, mountPath: m.mountPath, ...(m.readOnly ? { readOnly: true } : {}) };
}

export function hostPathVolume(m: HostMount): Record<string, unknown> {
  if (m.emptyDir) return { name: m.name, emptyDir: { medium: 'Memory' } };
  return { name: m.name, hostPath: { path: m.hostPath, ...(m.type ? { type: m.type } : {}) } };
}

/**
 * Where each daemon keeps its admin token (--admin-token-file, created 0600 with a random token at
 * the first start): a memory-backed emptyDir of the pod, writable by the image's non-root user as
 * by root. /status and drain ask for it; on the node, root reads it as
 * /proc/<pid>/root/run/kubeward/<mode>.token (docs/common.md, "Admin listener").
 */
export const ADMIN_TOKEN_DIR: HostMount = { name: 'admin-token', hostPath: '', mountPath: '/run/kubeward', emptyDir: true };

export function adminTokenArg(mode: string): string {
  return `--admin-token-file=${ADMIN_TOKEN_DIR.mountPath}/${mode}.token`;
}

export function httpProbe(port: number, path: string, periodSeconds: number): Record<string, unknown> {
  return { httpGet: { host: '127.0.0.1', path, port }, periodSeconds };
}

/**
 * A container's security context. Non-root: the image's user, nothing added. Root: uid 0 for
 * root-owned host paths, with every capability dropped but `add` (uid 0 without
 * CAP_DAC_OVERRIDE reaches only files root owns, and a read-only root filesystem leaves only the
 * mounts).
 */
export function containerSecurity(user: 'image' | 'root', add: readonly Capability[] = []): Record<string, unknown> {
  return {
    ...(user === 'root' ? { runAsUser: 0, runAsGroup: 0, runAsNonRoot: false } : { runAsUser: IMAGE_UID, runAsGroup: IMAGE_UID, runAsNonRoot: true }),
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'], ...(add.length > 0 ? { add: [...add] } : {}) },
  };
}

/** The pod-level context: the container runtime's default seccomp profile. */
export const POD_SECURITY = { seccompProfile: { type: 'RuntimeDefault' } };

/** /run/cloud-routes and its heartbeat directory, which watch writes and routes reads. */
export const CLOUD_ROUTES: HostMount = { name: 'cloud-routes', hostPath: '/run/cloud-routes', mountPath: '/run/cloud-routes', type: 'DirectoryOrCreate' };
export const CLOUD_ROUTES_HEARTBEAT: HostMount = {
  name: 'cloud-routes-heartbeat',
  hostPath: '/run/cloud-routes-heartbeat',
  mountPath: '/run/cloud-routes-heartbeat',
  type: 'DirectoryOrCreate',
};
/** The cluster CA, which watch's health check trusts. */
export const CLUSTER_CA: HostMount = {
  name: 'cluster-ca',
  hostPath: '/etc/kubernetes/pki/ca.crt',
  mountPath: '/etc/kubernetes/pki/ca.crt',
  readOnly: true,
  type: 'File',
};
/** The lock iptables and nft take (iptables backend); the host's, so the node's other users see it. */
export const XTABLES_LOCK: HostMount = { name: 'xtables-lock', hostPath: '/run/xtables.lock', mountPath: '/run/xtables.lock', type: 'FileOrCreate' };
