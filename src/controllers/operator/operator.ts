// The operator: one informer on ManagedClusters feeding one work queue per controller, started
// only while this replica holds the leader Lease (standbys keep their cache warm so a take-over
// starts at once). Losing the lease stops the controllers and ends the process' run.
import type { Clock } from '../../base/clock.ts';
import type { Logger } from '../../base/logger.ts';
import { EventRecorder } from '../../clients/kube/event-recorder.ts';
import { Informer, objectKey, resourceSource } from '../../clients/kube/informer.ts';
import type { KubeApi } from '../../clients/kube/kube-api.ts';
import { LeaderElector } from '../../clients/kube/leader-elector.ts';
import { KINDS } from '../../clients/kube/resource-kinds.ts';
import type { DeorbitSettings } from '../deorbit/deorbit-types.ts';
import type { ClusterConnector } from '../managed-cluster/cluster-connector.ts';
import { deorbitReconciler } from '../managed-cluster/deorbit-reconciler.ts';
import type { ManagedCluster } from '../managed-cluster/managed-cluster.ts';
import { Controller } from '../runtime/controller.ts';
import type { ControllerMetrics } from '../runtime/controller-metrics.ts';

export type ControllerName = 'deorbit' | 'routegc' | 'flight';
/** The controllers this build has; routegc and flight arrive with issue 7. */
export const AVAILABLE_CONTROLLERS: readonly ControllerName[] = ['deorbit'];

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
  clock: Clock;
  log: Logger;
  metrics: ControllerMetrics;
  workers?: number;
  resyncMs?: number;
}

export class Operator {
  readonly #informer: Informer<ManagedCluster>;
  readonly #controllers: Controller[] = [];
  readonly #elector: LeaderElector | undefined;
  #leading = false;
  #lost!: (code: number) => void;
  /** Resolves with 1 when this replica lost the lease it held. */
  readonly lostLeadership = new Promise<number>((resolve) => (this.#lost = resolve));

  constructor(opts: OperatorOptions) {
    const clusters = opts.api.resource<ManagedCluster>(KINDS.managedCluster);
    this.#informer = new Informer({ name: 'managedclusters', source: resourceSource(clusters, opts.namespace), clock: opts.clock, log: opts.log });
    const events = new EventRecorder({ events: opts.api.events, component: 'kubeward-operator', instance: opts.leaderElection?.identity, clock: opts.clock, log: opts.log });
    const enqueueAll = (obj: ManagedCluster): void => {
      if (this.#leading) for (const c of this.#controllers) c.enqueue(objectKey(obj));
    };
    this.#informer.on('add', enqueueAll).on('update', enqueueAll).on('delete', enqueueAll);
    const listKeys = (): string[] => this.#informer.list().map(objectKey);
    if (opts.controllers.includes('deorbit')) {
      const reconcile = deorbitReconciler({ clusters, connector: opts.connector, events, settings: opts.deorbit, clock: opts.clock, log: opts.log.child({ controller: 'deorbit' }) });
      this.#controllers.push(new Controller({ name: 'deorbit', reconcile, clock: opts.clock, log: opts.log, metrics: opts.metrics, workers: opts.workers, resyncMs: opts.resyncMs ?? 300_000, listKeys }));
    }
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

  #startControllers(): void {
    this.#leading = true;
    for (const c of this.#controllers) {
      c.start();
      for (const obj of this.#informer.list()) c.enqueue(objectKey(obj));
    }
  }

  async #stopControllers(): Promise<void> {
    this.#leading = false;
    await Promise.all(this.#controllers.map((c) => c.stop()));
  }
}
