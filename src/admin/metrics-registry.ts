// One prom-client registry per process (no global default), with process metrics on it.
import { collectDefaultMetrics, Registry } from 'prom-client';

export function createMetricsRegistry(mode: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ mode });
  collectDefaultMetrics({ register: registry, prefix: 'kubeward_' });
  return registry;
}
