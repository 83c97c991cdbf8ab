// The watcher's Prometheus metrics, registered on the mode's own registry.
import { Counter, Gauge, Histogram, type Registry } from '../admin/metrics.ts';
import type { HealthState } from './hysteresis.ts';
import type { ProbeResult } from '../probe/probe-result.ts';

export class WatchMetrics {
  readonly #probeDuration: Histogram;
  readonly #probes: Counter;
  readonly #state: Gauge;
  readonly #transitions: Counter;
  readonly #writeErrors: Counter;
  readonly #lastVerdict: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#probeDuration = new Histogram({
      name: 'kubeward_watch_probe_duration_seconds',
      help: 'Time for one health probe of the local apiserver, by result.',
      labelNames: ['result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
      registers,
    });
    this.#probes = new Counter({ name: 'kubeward_watch_probes_total', help: 'Health probes by result reason.', labelNames: ['reason'], registers });
    this.#state = new Gauge({
      name: 'kubeward_watch_vip_state',
      help: 'Published state per VIP: 1 for the current state, 0 for the others.',
      labelNames: ['vip', 'state'],
      registers,
    });
    this.#transitions = new Counter({ name: 'kubeward_watch_transitions_total', help: 'State changes of the verdict.', labelNames: ['to'], registers });
    this.#writeErrors = new Counter({ name: 'kubeward_watch_state_write_errors_total', help: 'Failed state file writes.', registers });
    this.#lastVerdict = new Gauge({ name: 'kubeward_watch_last_verdict_timestamp_seconds', help: 'Time of the last probe verdict.', registers });
  }

  observeProbe(r: ProbeResult, atMs: number): void {
    this.#probeDuration.observe({ result: r.ok ? 'success' : 'failure' }, r.latencyMs / 1000);
    this.#probes.inc({ reason: r.reason });
    this.#lastVerdict.set(atMs / 1000);
  }

  setState(vips: readonly string[], state: HealthState): void {
    for (const vip of vips) {
      for (const s of ['unknown', 'up', 'down'] as const) this.#state.set({ vip, state: s }, s === state ? 1 : 0);
    }
  }

  forgetVip(vip: string): void {
    for (const s of ['unknown', 'up', 'down'] as const) this.#state.remove({ vip, state: s });
  }

  transition(to: 'up' | 'down'): void {
    this.#transitions.inc({ to });
  }

  writeError(): void {
    this.#writeErrors.inc();
  }
}
