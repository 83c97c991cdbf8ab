// Writes routegc's and flight's conditions into a ManagedCluster's status (operator mode): the fresh
// object's conditions with ours merged in, guarded by its resourceVersion, so deorbit's condition
// and progress written meanwhile are never lost. A status write does not start a cycle (see
// operator/cycle-trigger.ts): the apiserver leaves metadata.generation alone for status updates.
import type { Clock } from '../../base/clock.ts';
import { describeError } from '../../base/errors.ts';
import type { Logger } from '../../base/logger.ts';
import { isConflict, isNotFound } from '../../clients/kube/kube-api-error.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import type { ManagedCluster } from './managed-cluster.ts';
import { mergeConditions, type ConditionWish } from './cluster-conditions.ts';

export type ClusterConditionWriter = (mc: ManagedCluster, wishes: ConditionWish[], signal?: AbortSignal) => Promise<void>;

/**
 * Never throws: a status that cannot be written is logged, the cycle's work stands. The signal is the
 * leader's fence: once it falls nothing is written (a replica that lost its lease reports nothing).
 */
export function clusterConditionWriter(o: { clusters: ResourceClient<ManagedCluster>; clock: Clock; log: Logger }): ClusterConditionWriter {
  return async (mc, wishes, signal) => {
    if (wishes.length === 0 || signal?.aborted) return;
    let current = mc;
    for (let attempt = 0; attempt < 3; attempt++) {
      const merged = mergeConditions(current.status?.conditions, wishes, o.clock.now(), current.metadata.generation);
      if (!merged) return;
      if (signal?.aborted) return;
      try {
        await o.clusters.replaceStatus({ ...current, status: { ...current.status, conditions: merged } }, { signal });
        return;
      } catch (err) {
        if (isNotFound(err) || signal?.aborted) return;
        if (!isConflict(err)) {
          o.log.warn({ cluster: mc.metadata.name, err: describeError(err) }, 'could not write the ManagedCluster conditions');
          return;
        }
        current = await o.clusters.get(mc.metadata.namespace, mc.metadata.name).catch(() => current);
      }
    }
    o.log.warn({ cluster: mc.metadata.name }, 'ManagedCluster conditions not written: it kept changing (409 three times)');
  };
}
