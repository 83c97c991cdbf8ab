// The operator's call fence (base/call-fence.ts): every request of a cluster's clients that changes
// something (a route write, a reboot, a deletion, a tag, a rule, a Node condition, a deorbit
// deletion) passes it just before it is sent. It asks the leader elector, by this replica's own
// clock, whether the lease is still held; a call that would go out late is not sent, counted and
// logged. Without leader election (one replica by configuration) every call passes.
import { Counter, type Registry } from '../../admin/metrics.ts';
import type { CallFence, FencedCall } from '../../base/call-fence.ts';
import type { Logger } from '../../base/logger.ts';

export interface LeaseHolder {
  /** Throws unless the lease is held right now (LeaderElector.assertLeading). */
  assertLeading(): void;
}

export class LeaseCallFence implements CallFence {
  readonly #refused: Counter<'service' | 'method'>;
  readonly #log: Logger;
  #holder: LeaseHolder | undefined;

  constructor(o: { registry: Registry; log: Logger }) {
    this.#refused = new Counter({
      name: 'kubeward_operator_fenced_calls_total',
      help: 'Calls that change something and were not sent: this replica no longer held the lease by its own clock',
      labelNames: ['service', 'method'],
      registers: [o.registry],
    });
    this.#log = o.log;
  }

  /** The elector whose lease guards the calls (the operator sets it once, when it builds its elector). */
  follow(holder: LeaseHolder): void {
    this.#holder = holder;
  }

  check(call: FencedCall): void {
    try {
      this.#holder?.assertLeading();
    } catch (err) {
      this.#refused.inc({ service: call.service, method: call.method });
      this.#log.warn({ ...call }, 'not sent: this replica no longer holds the lease by its own clock');
      throw err;
    }
  }
}
