// The API resources kubeward's controllers touch, in one place (and therefore in the RBAC rules).
import type { ResourceKind } from './resource-client.ts';

export const KINDS = {
  persistentVolumeClaim: { group: '', version: 'v1', plural: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', namespaced: true },
  persistentVolume: { group: '', version: 'v1', plural: 'persistentvolumes', kind: 'PersistentVolume', namespaced: false },
  service: { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true },
  node: { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false },
  secret: { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true },
  event: { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true },
  namespace: { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false },
  lease: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true },
  managedCluster: { group: 'kubeward.io', version: 'v1alpha1', plural: 'managedclusters', kind: 'ManagedCluster', namespaced: true },
} as const satisfies Record<string, ResourceKind>;

/** VolumeSnapshot's version is discovered: v1 since external-snapshotter 4, v1beta1 before. */
export function volumeSnapshotKind(version: string): ResourceKind {
  return { group: 'snapshot.storage.k8s.io', version, plural: 'volumesnapshots', kind: 'VolumeSnapshot', namespaced: true };
}
