// The operator: one informer on ManagedClusters feeding one work queue per controller (deorbit,
// routegc, flight), started only while this replica holds the leader Lease (standbys keep their
// cache warm so a take-over starts at once). Losing the lease stops the controllers and ends the run.
import type { Clock } from '../../base/clock.ts';
import type { Logger } from '../../base/logger.ts';
import { EventRecorder } from '../../clients/kube/event-recorder.ts';
import { Informer, objectKey, resourceSource } from '../../clients/kube/informer.ts';
import type { KubeApi } from '../../clients/kube/kube-api.ts';
import { LeaderElector } from '../../clients/kube/leader-elector.ts';
import { KINDS } from '../../clients/kube/resource-kinds.ts';
import type { DeorbitSettings } from '../deorbit/deorbit-types.ts';
import type { ClusterConnector } from '../managed-cluster/cluster-connector.ts';
import type { ManagedCluster } from '../managed-cluster/managed-cluster.ts';
import type { ClusterClientSource } from '../managed-cluster/cluster-clients.ts';
import type { Controller } from '../runtime/controller.ts';
import type { ControllerMetrics } from '../runtime/controller-metrics.ts';
import { startSpreadMs } from './operator-scale.ts';
import type { LeaseCallFence } from './lease-call-fence.ts';
import {
  buildControllers,
  type ControllerName,
  type FlightOperatorSettings,
  type OperatorController,
  type RouteGcOperatorSettings,
} from './operator-controllers.ts';

export type { ControllerName } from './operator-controllers.ts';

export interface LeaderElectionSettings {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

export interface OperatorOptions {
  api: KubeApi;
  /** Only ManagedClusters in this namespace; undefined: every namespace. */
  namespace?: string;
  controllers: readonly ControllerName[];
  /** undefined: no election, this replica acts at once (one replica only!). */
  leaderElection?: LeaderElectionSettings;
  connector: ClusterConnector;
  deorbit: DeorbitSettings;
  /** Needed when routegc or flight runs: their clients, from the ManagedCluster's Secrets. */
  clients?: ClusterClientSource;
  routegc?: RouteGcOperatorSettings;
  flight?: FlightOperatorSettings;
  clock: Clock;
  log: Logger;
  metrics: ControllerMetrics;
  workers?: number;
  resyncMs?: number;
  /** Jitter source of routegc's and flight's intervals and of the start spread (tests). */
  random?: () => number;
  /**
   * Sharding (shard.ts): only clusters this returns true for enter the controllers: watch events,
   * the list at start, resyncs, the worker count, and every reconcile (a cluster whose label moved
   * it elsewhere stops requeueing). undefined: every cluster.
   */
  ownsCluster?: (mc: ManagedCluster) => boolean;
  /** The fence the cluster clients check before every changing call: it follows this operator's elector. */
  callFence?: LeaseCallFence;
  /** More caches the clients read from (the Secret versions): started and stopped with the operator. */
  caches?: readonly { start(): void; close(): Promise<void> }[];
}

/**
 * The cache keeps no managedFields (a few KiB per cluster nobody here reads). A status PUT built
 * from the cached object leaves them as they are on the server: an update that omits them keeps them.
 */
export function withoutManagedFields(mc: ManagedCluster): ManagedCluster {
  const meta = mc.metadata as ManagedCluster['metadata'] & { managedFields?: unknown };
  if (meta.managedFields === undefined) return mc;
  const { managedFields: _dropped, ...metadata } = meta;
  return { ...mc, metadata };
}

export class Operator {
  readonly #informer: Informer<ManagedCluster>;
  readonly #controllers: Controller[];
  readonly #wired: OperatorController[];
  readonly #elector: LeaderElector | undefined;
  readonly #opts: OperatorOptions;
  #leading = false;
  #closing: Promise<void> | undefined;
  /** Leading, and the first cycles of every cached cluster are queued: events enqueue from now on. */
  #dispatching = false;
  #lost!: (code: number) => void;
  /** Resolves with 1 when this replica lost the lease it held. */
  readonly lostLeadership = new Promise<number>((resolve) => (this.#lost = resolve));

  constructor(opts: OperatorOptions) {
    const clusters = opts.api.resource<ManagedCluster>(KINDS.managedCluster);
    this.#informer = new Informer({
      name: 'managedclusters',
      source: resourceSource(clusters, opts.namespace),
      clock: opts.clock,
      log: opts.log,
      transform: withoutManagedFields,
    });
    const events = new EventRecorder({
      events: opts.api.events,
      component: 'kubeward-operator',
      instance: opts.leaderElection?.identity,
      clock: opts.clock,
      log: opts.log,
    });
    this.#opts = opts;
    const owns = opts.ownsCluster ?? (() => true);
    const listKeys = (): string[] => this.#owned().map(objectKey);
    const clusterCount = (): number => (opts.ownsCluster ? this.#owned().length : this.#informer.size);
    // A key whose object is gone is decided on its name alone (no label left to read).
    const admits = (key: string): boolean => owns(this.#informer.get(key) ?? fromKey(key));
    this.#wired = buildControllers(opts.controllers, {
      ...opts,
      clusters,
      events,
      listKeys,
      clusterCount,
      cached: (key) => this.#informer.get(key),
      cachedList: () => this.#informer.list(),
      admits: opts.ownsCluster ? admits : undefined,
    });
    this.#controllers = this.#wired.map((w) => w.controller);
    const enqueue = (obj: ManagedCluster, old?: ManagedCluster): void => {
      // Until the first cycles are spread (#startControllers), the cache's list is the source.
      if (!this.#dispatching) return;
      // The old object first: the predicate logs a change of owner in the order it happened.
      const movedHere = old !== undefined && !owns(old);
      // A cluster this replica does not own is left alone (one a label moved away included: the
      // reconcile-time check, admits, stops its requeues).
      if (!owns(obj)) return;
      // A cluster a label just moved to this shard starts in every controller, whatever changed.
      for (const w of this.#wired) if (movedHere || w.wants(obj, old)) w.controller.enqueue(objectKey(obj));
    };
    this.#informer
      .on('add', enqueue)
      .on('update', enqueue)
      .on('delete', (obj) => enqueue(obj));
    const le = opts.leaderElection;
    if (le) {
      this.#elector = new LeaderElector({
        leases: opts.api.leases,
        ...le,
        clock: opts.clock,
        log: opts.log,
        onStartedLeading: () => this.#startControllers(),
        onStoppedLeading: () => {
          void this.#stopControllers();
          this.#lost(1);
        },
      });
      opts.callFence?.follow(this.#elector);
    }
  }

  start(): void {
    for (const c of this.#opts.caches ?? []) c.start();
    this.#informer.start();
    if (this.#elector) this.#elector.start();
    else this.#startControllers();
  }

  /** Idempotent: the first call's options win and later callers join its promise. */
  close(opts: { releaseLease?: boolean } = {}): Promise<void> {
    return (this.#closing ??= this.#close(opts));
  }

  async #close(opts: { releaseLease?: boolean }): Promise<void> {
    await this.#elector?.close({ release: opts.releaseLease });
    await this.#stopControllers();
    await this.#informer.close();
    await Promise.all((this.#opts.caches ?? []).map((c) => c.close()));
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  /** Every controller's queue is empty and nothing is in flight. */
  get idle(): boolean {
    return this.#controllers.every((c) => c.idle);
  }

  readiness(): { ready: boolean; reason: string } {
    if (!this.#informer.hasSynced()) return { ready: false, reason: 'ManagedCluster cache not synced yet' };
    return { ready: true, reason: this.#leading ? 'leading' : 'standby: another replica holds the lease' };
  }

  status(): unknown {
    return {
      leader: this.#leading,
      election: this.#elector?.status() ?? 'off',
      informer: this.#informer.status(),
      controllers: this.#controllers.map((c) => c.status()),
    };
  }

  /** The ManagedClusters in the cache (every shard's), for a shard's status and metrics. */
  cachedClusters(): ManagedCluster[] {
    return this.#informer.list();
  }

  #owned(): ManagedCluster[] {
    const owns = this.#opts.ownsCluster;
    const all = this.#informer.list();
    return owns ? all.filter(owns) : all;
  }

  /**
   * After start or a leader change: once the cache is synced, every owned cluster's first look by
   * every controller is queued at one random point of a short window (operator-scale.ts startSpreadMs),
   * so all begin within seconds and their clouds are not all asked in the same instant.
   */
  #startControllers(): void {
    this.#leading = true;
    void this.#informer.waitForSync().then(() => {
      if (!this.#leading) return;
      const all = this.#informer.list();
      const owned = this.#owned();
      if (owned.length !== all.length)
        this.#opts.log.info({ owned: owned.length, skipped: all.length - owned.length }, 'shard: starting with the clusters this shard owns');
      const random = this.#opts.random ?? Math.random;
      const intervals = [this.#opts.routegc?.intervalMs, this.#opts.flight?.intervalMs].filter((x): x is number => x !== undefined);
      const spread = startSpreadMs(owned.length, Math.min(60_000, ...intervals));
      for (const c of this.#controllers) c.start();
      this.#dispatching = true;
      for (const obj of owned) {
        const key = objectKey(obj);
        // One point per cluster for every controller: routegc's and flight's first cycles of a cluster
        // run side by side and share their reads of the router, servers and Nodes (round-reads.ts).
        const delay = Math.floor(random() * spread);
        for (const c of this.#controllers) c.enqueue(key, delay);
      }
    });
  }

  async #stopControllers(): Promise<void> {
    this.#dispatching = false;
    this.#leading = false;
    await Promise.all(this.#controllers.map((c) => c.close()));
  }
}

/** A stand-in with the key's namespace and name (work-queue keys are namespace/name). */
function fromKey(key: string): ManagedCluster {
  const slash = key.indexOf('/');
  const metadata = slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
  return { metadata } as ManagedCluster;
}
