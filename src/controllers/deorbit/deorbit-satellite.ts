// The narrow view of the cluster being deorbited (the "satellite"), and its adapter on clients/kube:
// the lists a pass judges, what the kubeconfig reaches (kube-system's UID, the CA's fingerprint),
// and deletions by UID precondition (workloads with background propagation, so the garbage collector
// takes what they own).
import type { KubeApi } from '../../clients/kube/kube-api.ts';
import { discoverGroupVersion } from '../../clients/kube/discovery.ts';
import { isConflict, isNotFound } from '../../clients/kube/kube-api-error.ts';
import type { KubeObject, PersistentVolume, PersistentVolumeClaim, Service, VolumeSnapshot } from '../../clients/kube/kube-types.ts';
import type { ResourceKind } from '../../clients/kube/resource-client.ts';
import type { ClusterIdentity, DeleteAction, ObjectKind, PodView, SnapshotClass, WorkloadView } from './deorbit-types.ts';

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
  /** What the kubeconfig reaches; absent in ports that cannot tell (then nothing is compared). */
  identity?(): Promise<ClusterIdentity>;
  /** Pods of every namespace. */
  listPods?(): Promise<PodView[]>;
  /** ReplicaSets of every namespace (the Deployment behind a pod). */
  listReplicaSets?(): Promise<WorkloadView[]>;
}

/** The workload kinds deorbit may delete to free a claim (resource-kinds.ts holds what the operator itself touches). */
const WORKLOAD_KINDS: Partial<Record<ObjectKind, ResourceKind>> = {
  Pod: { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true },
  Deployment: { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true },
  StatefulSet: { group: 'apps', version: 'v1', plural: 'statefulsets', kind: 'StatefulSet', namespaced: true },
  DaemonSet: { group: 'apps', version: 'v1', plural: 'daemonsets', kind: 'DaemonSet', namespaced: true },
  ReplicaSet: { group: 'apps', version: 'v1', plural: 'replicasets', kind: 'ReplicaSet', namespaced: true },
  Job: { group: 'batch', version: 'v1', plural: 'jobs', kind: 'Job', namespaced: true },
};

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
        const list = await api.resource<KubeObject & { driver?: string; parameters?: Record<string, string> }>(volumeSnapshotClassKind(v)).list();
        return list.items.map((c) => ({ name: c.metadata.name, driver: c.driver ?? '', parameters: c.parameters }));
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
      const workload = WORKLOAD_KINDS[a.kind];
      const client = workload
        ? api.resource(workload)
        : a.kind === 'VolumeSnapshot'
          ? api.volumeSnapshots(snapshotVersion ?? 'v1')
          : a.kind === 'PersistentVolumeClaim'
            ? api.pvcs
            : api.services;
      try {
        // A workload goes with what it owns (the garbage collector deletes its ReplicaSets and pods).
        await client.delete(a.namespace, a.name, { uid: a.uid, signal, propagationPolicy: workload && a.kind !== 'Pod' ? 'Background' : undefined });
        return 'deleted';
      } catch (err) {
        // A uid precondition that fails means the object we saw is gone (a namesake is judged next pass).
        if (isNotFound(err) || isConflict(err)) return 'absent';
        throw err;
      }
    },
    version: async () => (await api.client.request<{ gitVersion?: string }>('GET', '/version')).gitVersion ?? '',
    identity: async () => ({
      kubeSystemUid: (await api.namespaces.get(undefined, 'kube-system')).metadata.uid ?? '',
      // "none": the kubeconfig names no CA (system trust, or plain HTTP to a local proxy).
      caFingerprint: api.client.caFingerprint || 'none',
    }),
    listPods: async () => (await api.resource<PodView>(WORKLOAD_KINDS.Pod!).list()).items,
    listReplicaSets: async () => (await api.resource<WorkloadView>(WORKLOAD_KINDS.ReplicaSet!).list()).items,
  };
}
