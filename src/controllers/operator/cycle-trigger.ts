// Pure: which ManagedCluster changes start an early routegc or flight cycle. Those controllers run
// on their own interval; a status write must not start a cycle, or routegc's two sightings of an
// orphaned route could come a second apart instead of an interval apart.
import type { ManagedCluster } from '../managed-cluster/managed-cluster.ts';

/** True for a new object, a spec change (generation), a deletion starting, or a phase change. */
export function isCycleTrigger(obj: ManagedCluster, old?: ManagedCluster): boolean {
  if (!old) return true;
  if (obj.metadata.generation !== old.metadata.generation) return true;
  if (obj.metadata.deletionTimestamp !== old.metadata.deletionTimestamp) return true;
  return obj.status?.phase !== old.status?.phase;
}

/**
 * deorbit's trigger: not every status write, only what its decision reads from the
 * object: a new or deleted object, a spec change, a deletion starting, the finalizers or the phase.
 * Its own progress is written into status and looked at again by its requeue, not by this event.
 */
export function isDeorbitTrigger(obj: ManagedCluster, old?: ManagedCluster): boolean {
  if (isCycleTrigger(obj, old)) return true;
  return JSON.stringify(obj.metadata.finalizers ?? []) !== JSON.stringify(old?.metadata.finalizers ?? []);
}

/**
 * routegc's trigger: a cycle trigger, and on a cluster being deleted, a change of its finalizers:
 * deorbit letting it go is the moment routegc's own termination rule applies (clean up, or say why
 * not); a requeue it declined while deorbit still held the cluster would never come.
 */
export function isRouteGcTrigger(obj: ManagedCluster, old?: ManagedCluster): boolean {
  if (isCycleTrigger(obj, old)) return true;
  return obj.metadata.deletionTimestamp !== undefined && isDeorbitTrigger(obj, old);
}
