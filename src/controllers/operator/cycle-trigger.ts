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
