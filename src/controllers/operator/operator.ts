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
import { buildControllers, type ControllerName, type FlightOperatorSettings, type OperatorController, type RouteGcOperatorSettings } from './operator-controllers.ts';

export type { ControllerName } from './operator-controllers.ts';
/** The controllers this build has. */
export const AVAILABLE_CONTROLLERS: readonly ControllerName[] = ['deorbit', 'routegc', 'flight'];

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
  /** Jitter source of routegc's and flight's intervals (tests). */
  random?: () => number;
  /**
   * Sharding (shard.ts): only clusters this returns true for enter the controllers: watch events,
   * the list at start, resyncs, and every reconcile (a cluster whose label moved it elsewhere stops
   * requeueing). undefined: every cluster.
   */
  ownsCluster?: (cluster: ManagedCluster) => boolean;
}

export class Operator {
  readonly #informer: Informer<ManagedCluster>;
  readonly #controllers: Controller[];
  readonly #wired: OperatorController[];
  readonly #elector: LeaderElector | undefined;
  readonly #owns: (cluster: ManagedCluster) => boolean;
  readonly #log: Logger;
  #leading = false;
  #lost!: (code: number) => void;
  /** Resolves with 1 when this replica lost the lease it held. */
  readonly lostLeadership = new Promise<number>((resolve) => (this.#lost = resolve));

  constructor(opts: OperatorOptions) {
    const clusters = opts.api.resource<ManagedCluster>(KINDS.managedCluster);
    this.#informer = new Informer({ name: 'managedclusters', source: resourceSource(clusters, opts.namespace), clock: opts.clock, log: opts.log });
    const events = new EventRecorder({ events: opts.api.events, component: 'kubeward-operator', instance: opts.leaderElection?.identity, clock: opts.clock, log: opts.log });
    this.#owns = opts.ownsCluster ?? (() => true);
    this.#log = opts.log;
    const listKeys = (): string[] => this.#ownedClusters().map(objectKey);
    // A key whose object is gone is decided on its name alone (no label left to read).
    const admits = (key: string): boolean => this.#owns(this.#informer.get(key) ?? fromKey(key));
    this.#wired = buildControllers(opts.controllers, { ...opts, clusters, events, listKeys, cached: (key) => this.#informer.get(key), admits: opts.ownsCluster ? admits : undefined });
    this.#controllers = this.#wired.map((w) => w.controller);
    const enqueue = (obj: ManagedCluster, old?: ManagedCluster): void => {
      if (!this.#leading) return;
      // The old object first: the predicate logs a change of owner in the order it happened.
      const movedHere = old !== undefined && !this.#owns(old);
      if (!this.#owns(obj)) return;
      // A cluster a label just moved to this shard starts in every controller, whatever changed.
      for (const w of this.#wired) if (movedHere || w.wants(obj, old)) w.controller.enqueue(objectKey(obj));
    };
    this.#informer.on('add', enqueue).on('update', enqueue).on('delete', (obj) => enqueue(obj));
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
    }
  }

  start(): void {
    this.#informer.start();
    if (this.#elector) this.#elector.start();
    else this.#startControllers();
  }

  async stop(opts: { releaseLease?: boolean } = {}): Promise<void> {
    await this.#elector?.stop({ release: opts.releaseLease });
    await this.#stopControllers();
    await this.#informer.stop();
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

  #ownedClusters(): ManagedCluster[] {
    return this.#informer.list().filter((mc) => this.#owns(mc));
  }

  #startControllers(): void {
    this.#leading = true;
    const all = this.#informer.list();
    const owned = all.filter((mc) => this.#owns(mc));
    if (owned.length !== all.length) this.#log.info({ owned: owned.length, skipped: all.length - owned.length }, 'shard: starting with the clusters this shard owns');
    for (const c of this.#controllers) {
      c.start();
      for (const obj of owned) c.enqueue(objectKey(obj));
    }
  }

  async #stopControllers(): Promise<void> {
    this.#leading = false;
    await Promise.all(this.#controllers.map((c) => c.stop()));
  }
}

/** A stand-in with the key's namespace and name (work-queue keys are namespace/name). */
function fromKey(key: string): ManagedCluster {
  const slash = key.indexOf('/');
  const metadata = slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
  return { metadata } as ManagedCluster;
}
