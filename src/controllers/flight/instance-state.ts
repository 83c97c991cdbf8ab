// Nova instance state predicates, as Kubernikus defines them (pkg/client/openstack/kluster/node.go) (pure).
import type { ClusterInstance } from '../managed-cluster/cluster-view.ts';

type State = Pick<ClusterInstance, 'vmState' | 'taskState' | 'powerState'>;

const STARTING_TASKS = new Set(['spawning', 'scheduling', 'networking', 'block_device_mapping']);
// Task states that do not mean the instance is going away.
const HARMLESS_TASKS = new Set([
  'image_uploading',
  'rebooting',
  'reboot_started',
  'rebooting_hard',
  'reboot_started_hard',
  'reboot_pending',
  'reboot_pending_hard',
]);

export function isStarting(s: State): boolean {
  return s.taskState ? STARTING_TASKS.has(s.taskState) : s.vmState === 'building';
}

export function isStopping(s: State): boolean {
  return !!s.taskState && !STARTING_TASKS.has(s.taskState) && !HARMLESS_TASKS.has(s.taskState);
}

/** Active, powered (NOSTATE or RUNNING) and neither starting nor stopping. */
export function isRunning(s: State): boolean {
  return !isStarting(s) && !isStopping(s) && (s.powerState ?? 0) <= 1 && s.vmState === 'active';
}

/** In vm_state error and not already being deleted. */
export function isErroring(s: State): boolean {
  return s.vmState === 'error' && s.taskState !== 'deleting';
}
