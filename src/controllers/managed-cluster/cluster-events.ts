// Where routegc and flight report what they did: an event on the cluster's object (the ManagedCluster,
// or only the log in single-cluster mode) and on the Node it concerns, when there is one. The one
// event shape of every ManagedCluster controller (deorbit's events have no Node).
import type { EventSink } from '../../clients/kube/event-recorder.ts';
import type { KubeObject } from '../../clients/kube/kube-types.ts';
import type { Logger } from '../../base/logger.ts';

export interface ClusterEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  node?: string;
}

/** An event on the ManagedCluster alone (deorbit's, the termination route clean-up's): no Node. */
export type ManagedClusterEvent = Omit<ClusterEvent, 'node'>;

export type EmitEvent = (e: ClusterEvent) => Promise<void>;

/**
 * Logs every event, and records it on `cluster` (when given) and on the Node (through the cluster's
 * own API, where the Node lives). Recording failures are logged by the sinks, never thrown.
 */
export function eventEmitter(
  log: Logger,
  opts: { cluster?: { sink: EventSink; object: KubeObject }; nodes?: EventSink; nodeUid?: (name: string) => string | undefined },
): EmitEvent {
  return async (e) => {
    const fields = { reason: e.reason, node: e.node, message: e.message };
    if (e.type === 'Warning') log.warn(fields, 'event');
    else log.info(fields, 'event');
    const writes: Promise<void>[] = [];
    if (opts.cluster) writes.push(opts.cluster.sink.record(opts.cluster.object, e.type, e.reason, e.node ? `${e.node}: ${e.message}` : e.message));
    if (e.node && opts.nodes) {
      const node: KubeObject = { apiVersion: 'v1', kind: 'Node', metadata: { name: e.node, uid: opts.nodeUid?.(e.node) ?? e.node, namespace: 'default' } };
      writes.push(opts.nodes.record(node, e.type, e.reason, e.message));
    }
    await Promise.all(writes);
  };
}
