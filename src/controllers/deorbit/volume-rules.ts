// Pure rules about PVCs, PVs and Cinder volumes: which claims deorbit deletes, and which volumes it
// waits for. Only in-tree Cinder and the configured CSI drivers count; Retain and unclaimed volumes
// are reported rather than waited for, since nothing will ever delete them.
import type { PersistentVolume, PersistentVolumeClaim } from '../../clients/kube/kube-types.ts';
import type { CloudVolume } from './deorbit-types.ts';

/** The Cinder volume ID behind a PV, or undefined when the PV is not a Cinder volume. */
export function cinderVolumeId(pv: PersistentVolume, csiDrivers: readonly string[]): string | undefined {
  if (pv.spec.cinder?.volumeID) return pv.spec.cinder.volumeID;
  if (pv.spec.csi && csiDrivers.includes(pv.spec.csi.driver)) return pv.spec.csi.volumeHandle;
  return undefined;
}

/** Bound claims on Cinder PVs that are not already being deleted. */
export function claimsToDelete(pvcs: PersistentVolumeClaim[], pvs: PersistentVolume[], csiDrivers: readonly string[]): PersistentVolumeClaim[] {
  const byName = new Map(pvs.map((pv) => [pv.metadata.name, pv]));
  return pvcs.filter((pvc) => {
    if (pvc.metadata.deletionTimestamp) return false;
    if (pvc.status?.phase !== 'Bound' || !pvc.spec.volumeName) return false;
    const pv = byName.get(pvc.spec.volumeName);
    return pv !== undefined && cinderVolumeId(pv, csiDrivers) !== undefined;
  });
}

export type PvVerdict =
  | 'not-cinder' // NFS, another CSI driver...: not ours to wait for
  | 'failed' // phase Failed: the volume plugin gave up; waiting would not help
  | 'gone' // its Cinder volume no longer exists
  | 'retained' // Retain policy: nothing deletes the volume, by design
  | 'unclaimed' // Available: never bound, so deleting claims does not free it
  | 'waiting'; // its claim is (being) deleted and the volume still exists

export function judgePv(pv: PersistentVolume, volumeIds: ReadonlySet<string>, csiDrivers: readonly string[]): PvVerdict {
  const id = cinderVolumeId(pv, csiDrivers);
  if (id === undefined) return 'not-cinder';
  if (pv.status?.phase === 'Failed') return 'failed';
  if (!volumeIds.has(id)) return 'gone';
  if (pv.spec.persistentVolumeReclaimPolicy === 'Retain') return 'retained';
  if (pv.status?.phase === 'Available') return 'unclaimed';
  return 'waiting';
}

export interface VolumeWait {
  /** Cinder volumes still to go before deorbit may finish. */
  waitingFor: string[];
  /** Volumes that stay by design (Retain, unclaimed): reported, not waited for. */
  retained: string[];
}

export function judgeVolumes(pvs: PersistentVolume[], volumes: CloudVolume[], csiDrivers: readonly string[]): VolumeWait {
  const ids = new Set(volumes.map((v) => v.id));
  const out: VolumeWait = { waitingFor: [], retained: [] };
  for (const pv of pvs) {
    const verdict = judgePv(pv, ids, csiDrivers);
    const id = cinderVolumeId(pv, csiDrivers)!;
    if (verdict === 'waiting') out.waitingFor.push(id);
    else if (verdict === 'retained' || verdict === 'unclaimed') out.retained.push(id);
  }
  out.waitingFor.sort();
  out.retained.sort();
  return out;
}
