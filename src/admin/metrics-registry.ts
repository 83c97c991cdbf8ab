// One metrics registry per process (no global default), with the process metrics kubeward
// documents and its dashboard uses. Not prom-client's collectDefaultMetrics: that one also keeps an
// event-loop delay histogram, a GC performance observer and a dozen nodejs_* gauges running in every
// daemon (about 1.4 MiB RSS and 1 MiB private memory at rest, docs/footprint.md). The names, help texts and values below are those of prom-client's default metrics
// (node_modules/prom-client/lib/metrics/processCpuTotal.js, processStartTime.js, osMemoryHeap.js).
import { Counter, Gauge, Registry } from './metrics.ts';

export function createMetricsRegistry(mode: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ mode });
  registerProcessMetrics(registry, 'kubeward_');
  return registry;
}

/** process_cpu_*, process_start_time_seconds, process_resident_memory_bytes and the V8 heap, read at each scrape. */
export function registerProcessMetrics(registry: Registry, prefix: string): void {
  const registers = [registry];
  // From zero: the counters are the CPU time since the process started, start-up included.
  let last: NodeJS.CpuUsage = { user: 0, system: 0 };
  // Registered first: a registry collects in registration order, and this collect moves all three.
  new Counter({
    name: `${prefix}process_cpu_seconds_total`,
    help: 'Total user and system CPU time spent in seconds.',
    registers,
    collect() {
      // Counters move by the CPU used since the last scrape (as prom-client does): the three stay consistent.
      const now = process.cpuUsage();
      const du = (now.user - last.user) / 1e6;
      const ds = (now.system - last.system) / 1e6;
      last = now;
      user.inc(du);
      system.inc(ds);
      this.inc(du + ds);
    },
  });
  const user = new Counter({ name: `${prefix}process_cpu_user_seconds_total`, help: 'Total user CPU time spent in seconds.', registers });
  const system = new Counter({ name: `${prefix}process_cpu_system_seconds_total`, help: 'Total system CPU time spent in seconds.', registers });
  const started = Math.round(Date.now() / 1000 - process.uptime());
  new Gauge({ name: `${prefix}process_start_time_seconds`, help: 'Start time of the process since unix epoch in seconds.', registers }).set(started);
  new Gauge({
    name: `${prefix}process_resident_memory_bytes`,
    help: 'Resident memory size in bytes.',
    registers,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  new Gauge({
    name: `${prefix}nodejs_heap_size_total_bytes`,
    help: 'Process heap size from Node.js in bytes.',
    registers,
    collect() {
      const m = process.memoryUsage();
      this.set(m.heapTotal);
      heapUsed.set(m.heapUsed);
      external.set(m.external);
    },
  });
  const heapUsed = new Gauge({ name: `${prefix}nodejs_heap_size_used_bytes`, help: 'Process heap size used from Node.js in bytes.', registers });
  // Memory of C++ objects bound to JavaScript ones (Buffers, the read slabs, TLS contexts): with the
  // heap, what a breakdown of the private memory needs (bench --soak).
  const external = new Gauge({ name: `${prefix}nodejs_external_memory_bytes`, help: 'Node.js external memory size in bytes.', registers });
}
