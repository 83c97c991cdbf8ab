// Pure rules about what deorbit keeps although it is the cluster's: snapshots of a backup class
// (cinder-csi's `parameters.type: backup` makes Cinder backups, meant to outlive their volume) and
// anything a user labelled kubeward.io/deorbit=keep. Both stay unless the ManagedCluster opts in
// (spec.deorbit.deleteBackups, spec.deorbit.deleteKept); status lists what was kept.
import type { KubeObject, VolumeSnapshot } from '../../clients/kube/kube-types.ts';
import type { DeorbitPolicy, SnapshotClass } from './deorbit-types.ts';

/** The label a user puts on a claim, snapshot or Service to keep it (and its volume or load balancer). */
export const KEEP_LABEL = 'kubeward.io/deorbit';
export const KEEP_VALUE = 'keep';

export function isBackupClass(c: SnapshotClass | undefined): boolean {
  return c?.parameters?.type === 'backup';
}

export function isLabelledKeep(o: KubeObject): boolean {
  return o.metadata.labels?.[KEEP_LABEL] === KEEP_VALUE;
}

/** Whether the policy keeps this object; a snapshot also by its class. */
export function isKept(o: KubeObject, policy: DeorbitPolicy | undefined, classes?: readonly SnapshotClass[]): boolean {
  if (isLabelledKeep(o) && !policy?.deleteKept) return true;
  const cls = (o as VolumeSnapshot).spec?.volumeSnapshotClassName;
  if (classes && cls !== undefined && !policy?.deleteBackups) return isBackupClass(classes.find((c) => c.name === cls));
  return false;
}

export const keptName = (kind: string, o: KubeObject): string => `${kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
