// Pure rules about VolumeSnapshots: deorbit deletes (and waits for) only snapshots whose
// VolumeSnapshotClass is served by a Cinder CSI driver. Deleting a snapshot of another driver (a
// backup tool's, a storage array's) would destroy data that is not in the cloud being cleaned up.
import type { VolumeSnapshot } from '../../clients/kube/kube-types.ts';
import type { SnapshotClass } from './deorbit-types.ts';

export interface SnapshotJudgement {
  /** On a class whose driver is one of the Cinder CSI drivers. */
  cinder: VolumeSnapshot[];
  /** Another driver, an unknown class, or no class at all: not ours to delete. */
  other: VolumeSnapshot[];
}

/**
 * Splits snapshots by the driver of their class. A snapshot without a class name, or naming a class
 * that does not exist, is not proven to be Cinder's (the snapshot controller fills in the default
 * class on creation, so an empty name means it never did).
 */
export function judgeSnapshots(
  snapshots: readonly VolumeSnapshot[],
  classes: readonly SnapshotClass[] | undefined,
  csiDrivers: readonly string[],
): SnapshotJudgement {
  const driverOf = new Map((classes ?? []).map((c) => [c.name, c.driver]));
  const out: SnapshotJudgement = { cinder: [], other: [] };
  for (const s of snapshots) {
    const cls = s.spec?.volumeSnapshotClassName;
    const driver = cls ? driverOf.get(cls) : undefined;
    (driver !== undefined && csiDrivers.includes(driver) ? out.cinder : out.other).push(s);
  }
  return out;
}
