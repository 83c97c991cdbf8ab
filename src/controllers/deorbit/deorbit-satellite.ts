// The narrow view of the cluster being deorbited (the "satellite"), and its adapter on clients/kube.
import type { KubeApi } from '../../clients/kube/kube-api.ts';
import { discoverGroupVersion } from '../../clients/kube/discovery.ts';
import { isConflict, isNotFound } from '../../clients/kube/kube-api-error.ts';
import type { PersistentVolume, PersistentVolumeClaim, Service, VolumeSnapshot } from '../../clients/kube/kube-types.ts';
import type { DeleteAction } from './deorbit-types.ts';

export interface DeorbitSatellite {
  /** undefined when the cluster has no VolumeSnapshot API. */
  listSnapshots(): Promise<VolumeSnapshot[] | undefined>;
  listPvcs(): Promise<PersistentVolumeClaim[]>;
  listPvs(): Promise<PersistentVolume[]>;
  listServices(): Promise<Service[]>;
  /** Deletes exactly the object seen (uid precondition); resolves 'absent' when it is already gone. */
  delete(action: DeleteAction): Promise<'deleted' | 'absent'>;
  /** Kubernetes version of the cluster ("v1.30.2"). */
  version(): Promise<string>;
}

const SNAPSHOT_VERSIONS = ['v1', 'v1beta1'] as const;

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
    listPvcs: async () => (await api.pvcs.list()).items,
    listPvs: async () => (await api.pvs.list()).items,
    listServices: async () => (await api.services.list()).items,
    delete: async (a) => {
      const client = a.kind === 'VolumeSnapshot' ? api.volumeSnapshots(snapshotVersion ?? 'v1') : a.kind === 'PersistentVolumeClaim' ? api.pvcs : api.services;
      try {
        await client.delete(a.namespace, a.name, { uid: a.uid });
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
