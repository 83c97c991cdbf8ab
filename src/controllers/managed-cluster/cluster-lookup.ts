// What the routegc and flight reconcilers share around a queue key: reading the ManagedCluster
// behind it, forgetting per-cluster state once it is gone, and the jittered next cycle.
import { isNotFound } from '../../clients/kube/kube-api-error.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import type { ReconcileResult } from '../runtime/controller.ts';
import type { ManagedCluster } from './managed-cluster.ts';

/**
 * The ManagedCluster of a queue key ("namespace/name", or "name" when cluster-scoped); undefined
 * when it no longer exists, after dropping the state kept for it under "<key>#<uid>" in `state`.
 */
export async function getClusterOrForget(
  clusters: ResourceClient<ManagedCluster>,
  key: string,
  state: Map<string, unknown>,
): Promise<ManagedCluster | undefined> {
  const [namespace, name] = key.includes('/') ? (key.split('/', 2) as [string, string]) : [undefined, key];
  try {
    return await clusters.get(namespace, name);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    for (const k of state.keys()) if (k.startsWith(`${key}#`)) state.delete(k);
    return undefined;
  }
}

/** Like getClusterOrForget, from the informer's cache (synced before any key is queued). */
export function cachedOrForget(cached: (key: string) => ManagedCluster | undefined, key: string, state: Map<string, unknown>): ManagedCluster | undefined {
  const mc = cached(key);
  if (!mc) for (const k of state.keys()) if (k.startsWith(`${key}#`)) state.delete(k);
  return mc;
}

/** The next cycle after intervalMs plus 0-50 % jitter, so clusters do not cycle in step. */
export function jitteredRequeue(intervalMs: number, random: () => number = Math.random): ReconcileResult {
  return { requeueAfterMs: Math.round(intervalMs * (1 + 0.5 * random())) };
}
