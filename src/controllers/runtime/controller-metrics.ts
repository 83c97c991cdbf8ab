// Metrics every controller shares, labelled by controller: reconciles by result, errors, duration,
// queue depth. Created once per registry (the mode's), never on a global one.
import { Counter, Gauge, Histogram, type Registry } from '../../admin/metrics.ts';

export interface ControllerMetrics {
  reconciles: Counter<'controller' | 'result'>;
  errors: Counter<'controller'>;
  duration: Histogram<'controller'>;
  queueDepth: Gauge<'controller'>;
}

export function createControllerMetrics(registry: Registry): ControllerMetrics {
  const registers = [registry];
  return {
    reconciles: new Counter({
      name: 'kubeward_controller_reconciles_total',
      help: 'Reconciles run, by controller and result (success, requeue, error).',
      labelNames: ['controller', 'result'],
      registers,
    }),
    errors: new Counter({ name: 'kubeward_controller_reconcile_errors_total', help: 'Reconciles that failed.', labelNames: ['controller'], registers }),
    duration: new Histogram({
      name: 'kubeward_controller_reconcile_duration_seconds',
      help: 'Time one reconcile took.',
      labelNames: ['controller'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60],
      registers,
    }),
    queueDepth: new Gauge({ name: 'kubeward_controller_queue_depth', help: 'Keys waiting in the work queue.', labelNames: ['controller'], registers }),
  };
}
