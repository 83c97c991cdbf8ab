// Writes the controllers' conditions into a ManagedCluster's status (operator mode). One writer for
// every controller of the process: wishes of routegc and flight for the same cluster are
// merged and sent as one write, one write per cluster at a time, on the newest object this process
// knows (its own last write, else the informer's copy, else the caller's), so the controllers no
// longer race each other into 409s. A conflict (deorbit or a person wrote) re-reads and retries.
// Only changed conditions are written (cluster-conditions.ts), so a steady cluster costs no write.
// With `gather`, a cluster's first conditions of routegc and flight go out as one write.
// A status write does not start a cycle (see operator/cycle-trigger.ts): the apiserver leaves
// metadata.generation alone for status updates.
import type { Clock } from '../../base/clock.ts';
import { describeError } from '../../base/errors.ts';
import type { Logger } from '../../base/logger.ts';
import { isConflict, isNotFound } from '../../clients/kube/kube-api-error.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import type { ManagedCluster } from './managed-cluster.ts';
import { mergeConditions, type ConditionWish } from './cluster-conditions.ts';

export type ClusterConditionWriter = (mc: ManagedCluster, wishes: ConditionWish[], signal?: AbortSignal) => Promise<void>;

export interface ClusterConditionWriterOptions {
  clusters: ResourceClient<ManagedCluster>;
  clock: Clock;
  log: Logger;
  /** The informer's copy of a ManagedCluster by "namespace/name" (operator); without it, the caller's object. */
  cached?: (key: string) => ManagedCluster | undefined;
  /** Counts the 409s met (bench and metrics). */
  onConflict?: () => void;
  /**
   * First conditions (operator): how many controllers write to each cluster (routegc and
   * flight: 2), and how long the first one's first conditions wait for the others' (ms). A write whose
   * condition types the cluster's status does not hold yet waits up to gatherMs for the other
   * controllers' wishes, so a new cluster, or every cluster at the operator's first start, gets one
   * PUT for both first conditions instead of one each. Its caller does not wait: the write goes out
   * with the last controller's wishes or when the time is up. Default: no waiting.
   */
  gather?: { writers: number; gatherMs: number };
}

interface Pending {
  wishes: Map<string, ConditionWish>;
  signals: AbortSignal[];
  mc: ManagedCluster;
  /** Calls that put wishes here (the writers gathered). */
  callers: number;
  /** A first write waiting for the other controllers (gather). */
  waiting?: boolean;
}

const keyOf = (mc: ManagedCluster): string => (mc.metadata.namespace ? `${mc.metadata.namespace}/${mc.metadata.name}` : mc.metadata.name);

/**
 * Never throws: a status that cannot be written is logged, the cycle's work stands. The signal is the
 * leader's fence: once it falls nothing is written for that caller (a replica that lost its lease reports nothing).
 */
export function clusterConditionWriter(o: ClusterConditionWriterOptions): ClusterConditionWriter {
  const pending = new Map<string, Pending>();
  const flushing = new Map<string, Promise<void>>();
  /** This process's last written object per cluster, until the informer has caught up with it. */
  const written = new Map<string, ManagedCluster>();

  const newest = (key: string, fallback: ManagedCluster): ManagedCluster => {
    const cached = o.cached?.(key);
    const own = written.get(key);
    if (own && cached && cached.metadata.resourceVersion === own.metadata.resourceVersion) written.delete(key);
    else if (own && own.metadata.uid === (cached ?? fallback).metadata.uid) return own;
    return cached ?? fallback;
  };

  const writeOnce = async (key: string, p: Pending): Promise<void> => {
    const live = p.signals.filter((s) => !s.aborted);
    if (live.length === 0 && p.signals.length > 0) return;
    const signal = live.length ? AbortSignal.any(live) : undefined;
    const wishes = [...p.wishes.values()];
    let current = newest(key, p.mc);
    for (let attempt = 0; attempt < 3; attempt++) {
      const merged = mergeConditions(current.status?.conditions, wishes, o.clock.now(), current.metadata.generation);
      if (!merged) return;
      if (signal?.aborted) return;
      try {
        const answer = await o.clusters.replaceStatus({ ...current, status: { ...current.status, conditions: merged } }, { signal });
        // Kept only until the informer has it; without managedFields, which a status PUT leaves alone anyway.
        const { managedFields: _dropped, ...metadata } = answer.metadata as ManagedCluster['metadata'] & { managedFields?: unknown };
        written.set(key, { ...answer, metadata });
        return;
      } catch (err) {
        if (isNotFound(err) || signal?.aborted) {
          written.delete(key);
          return;
        }
        if (!isConflict(err)) {
          o.log.warn({ cluster: key, err: describeError(err) }, 'could not write the ManagedCluster conditions');
          return;
        }
        o.onConflict?.();
        written.delete(key);
        current = await o.clusters.get(current.metadata.namespace, current.metadata.name, { signal }).catch(() => current);
      }
    }
    o.log.warn({ cluster: key }, 'ManagedCluster conditions not written: it kept changing (409 three times)');
  };

  const flush = async (key: string): Promise<void> => {
    for (;;) {
      const p = pending.get(key);
      if (!p) break;
      pending.delete(key);
      await writeOnce(key, p);
    }
    flushing.delete(key);
  };

  const start = (key: string): Promise<void> => {
    let f = flushing.get(key);
    if (!f) {
      f = flush(key);
      flushing.set(key, f);
    }
    return f;
  };

  /** None of these condition types is in the cluster's status yet: the controller's first conditions. */
  const isFirst = (key: string, mc: ManagedCluster, wishes: ConditionWish[]): boolean => {
    const held = newest(key, mc).status?.conditions ?? [];
    return !wishes.some((w) => held.some((c) => c.type === w.type));
  };

  return async (mc, wishes, signal) => {
    if (wishes.length === 0 || signal?.aborted) return;
    const key = keyOf(mc);
    const fresh = !pending.has(key);
    const p: Pending = pending.get(key) ?? { wishes: new Map(), signals: [], mc, callers: 0 };
    // A later wish for the same condition type replaces an earlier one not yet written.
    for (const w of wishes) p.wishes.set(w.type, w);
    if (signal) p.signals.push(signal);
    p.mc = mc;
    p.callers++;
    pending.set(key, p);
    const g = o.gather;
    if (g && !flushing.has(key) && p.callers < g.writers && (p.waiting || (fresh && isFirst(key, mc, wishes)))) {
      if (!p.waiting) {
        p.waiting = true;
        // Written by the last writer's call, or here once the time is up; the caller goes on meanwhile.
        // The caller's fence ends the wait early (a stopping replica keeps no timer; what it wished is not written then).
        const go = () => {
          if (pending.get(key) === p && p.waiting) void start(key);
        };
        o.clock.sleep(g.gatherMs, signal).then(go, go);
      }
      return;
    }
    p.waiting = false;
    // Resolves once this cluster's queue is written, this caller's wishes included.
    await start(key);
  };
}
