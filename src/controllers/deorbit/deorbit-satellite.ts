// The narrow view of the cluster being deorbited (the "satellite"), and its adapter on clients/kube.
import type { KubeApi } from '../../clients/kube/kube-api.ts';
import { discoverGroupVersion } from '../../clients/kube/discovery.ts';
import { isConflict, isNotFound } from '../../clients/kube/kube-api-error.ts';
import type { KubeObject, PersistentVolume, PersistentVolumeClaim, Service, VolumeSnapshot } from '../../clients/kube/kube-types.ts';
import type { ResourceKind } from '../../clients/kube/resource-client.ts';
import type { DeleteAction, SnapshotClass } from './deorbit-types.ts';

export interface DeorbitSatellite {
  /** undefined when the cluster has no VolumeSnapshot API. */
  listSnapshots(): Promise<VolumeSnapshot[] | undefined>;
  /** undefined when the cluster has no VolumeSnapshotClass API. */
  listSnapshotClasses(): Promise<SnapshotClass[] | undefined>;
  listPvcs(): Promise<PersistentVolumeClaim[]>;
  listPvs(): Promise<PersistentVolume[]>;
  listServices(): Promise<Service[]>;
  /**
   * Deletes exactly the object seen (uid precondition); resolves 'absent' when it is already gone.
   * The signal is the leader's fence: an aborted one sends nothing, and aborts a call in flight.
   */
  delete(action: DeleteAction, signal?: AbortSignal): Promise<'deleted' | 'absent'>;
  /** Kubernetes version of the cluster ("v1.30.2"). */
  version(): Promise<string>;
}

const SNAPSHOT_VERSIONS = ['v1', 'v1beta1'] as const;

/** VolumeSnapshotClass (cluster-scoped), served next to VolumeSnapshot in the same group version. */
function volumeSnapshotClassKind(version: string): ResourceKind {
  return { group: 'snapshot.storage.k8s.io', version, plural: 'volumesnapshotclasses', kind: 'VolumeSnapshotClass', namespaced: false };
}

export function kubeDeorbitSatellite(api: KubeApi): DeorbitSatellite {
  let snapshotVersion: string | undefined;
  const snapshots = async (): Promise<string | undefined> => {
    // Discovered on every list until found: the CRD may be installed or removed at any time.
    snapshotVersion = await discoverGroupVersion(api.client, 'snapshot.storage.k8s.io', SNAPSHOT_VERSIONS);
    return snapshotVersion;
  };
  return {
    listSnapshots: async () => {
      const v = await snapshots();
      if (!v) return undefined;
      try {
        return (await api.volumeSnapshots(v).list()).items;
      } catch (err) {
        if (isNotFound(err)) return undefined; // the CRD went away between discovery and list
        throw err;
      }
    },
    listSnapshotClasses: async () => {
      const v = await snapshots();
      if (!v) return undefined;
      try {
        const list = await api.resource<KubeObject & { driver?: string }>(volumeSnapshotClassKind(v)).list();
        return list.items.map((c) => ({ name: c.metadata.name, driver: c.driver ?? '' }));
      } catch (err) {
        if (isNotFound(err)) return undefined; // snapshots without classes: none is proven Cinder's
        throw err;
      }
    },
    listPvcs: async () => (await api.pvcs.list()).items,
    listPvs: async () => (await api.pvs.list()).items,
    listServices: async () => (await api.services.list()).items,
    delete: async (a, signal) => {
      signal?.throwIfAborted();
      const client = a.kind === 'VolumeSnapshot' ? api.volumeSnapshots(snapshotVersion ?? 'v1') : a.kind === 'PersistentVolumeClaim' ? api.pvcs : api.services;
      try {
        await client.delete(a.namespace, a.name, { uid: a.uid, signal });
        return 'deleted';
      } catch (err) {
        // A uid precondition that fails means the object we saw is gone (a namesake is judged next pass).
        if (isNotFound(err) || isConflict(err)) return 'absent';
        throw err;
      }
    },
    version: async () => (await api.client.request<{ gitVersion?: string }>('GET', '/version')).gitVersion ?? '',
  };
}
