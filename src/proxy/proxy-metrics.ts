// The proxy's Prometheus metrics on the process registry. Gauges and byte counters are read from
// the frontends when scraped, so the data path never touches a metric per chunk.
import { Counter, Gauge, Histogram, type Registry } from '../admin/metrics.ts';
import type { UpstreamState } from './upstream-list.ts';

export interface UpstreamSample {
  key: string;
  state: UpstreamState;
  drained: boolean;
  active: number;
  bytesToUpstream: number;
  bytesToClient: number;
}

export interface FrontendSample {
  name: string;
  upstreams: UpstreamSample[];
  /** Health checks are in a local fault streak (no fds, unreadable token, ...). */
  localFault: boolean;
  connectionCap: number;
  openConnections: number;
}

const STATES: readonly UpstreamState[] = ['unknown', 'up', 'down'];

export class ProxyMetrics {
  readonly connections: Counter<'frontend' | 'upstream'>;
  readonly connectSeconds: Histogram<'frontend' | 'upstream' | 'result'>;
  readonly checkSeconds: Histogram<'frontend' | 'upstream'>;
  readonly checks: Counter<'frontend' | 'upstream' | 'result'>;
  readonly ejections: Counter<'frontend' | 'upstream' | 'cause'>;
  readonly retries: Counter<'frontend'>;
  readonly failOpen: Counter<'frontend'>;
  readonly clientFailures: Counter<'frontend'>;
  readonly pacedWaits: Counter<'frontend' | 'upstream'>;
  readonly closedByProxy: Counter<'frontend' | 'upstream' | 'why'>;
  readonly rejected: Counter<'frontend' | 'why'>;
  readonly relayPath: Gauge<'path'>;

  constructor(registry: Registry, sample: () => readonly FrontendSample[]) {
    const registers = [registry];
    const up = ['frontend', 'upstream'] as const;
    this.connections = new Counter({
      name: 'kubeward_proxy_upstream_connections_total',
      help: 'Client connections forwarded to the upstream',
      labelNames: up,
      registers,
    });
    this.connectSeconds = new Histogram({
      name: 'kubeward_proxy_upstream_connect_seconds',
      help: 'TCP connect time to the upstream, by result (ok, refused, timeout, ...)',
      labelNames: [...up, 'result'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.checkSeconds = new Histogram({
      name: 'kubeward_proxy_check_seconds',
      help: 'Active health check latency',
      labelNames: up,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.checks = new Counter({
      name: 'kubeward_proxy_checks_total',
      help: 'Active health checks by result (ok or the failure reason)',
      labelNames: [...up, 'result'],
      registers,
    });
    this.ejections = new Counter({
      name: 'kubeward_proxy_ejections_total',
      help: 'Times the upstream was marked down, by cause (check or connect)',
      labelNames: [...up, 'cause'],
      registers,
    });
    this.retries = new Counter({
      name: 'kubeward_proxy_retries_total',
      help: 'Connect attempts on another upstream after a failed one, inside the same client connection',
      labelNames: ['frontend'],
      registers,
    });
    this.failOpen = new Counter({
      name: 'kubeward_proxy_fail_open_total',
      help: 'Client connections sent to a down upstream because none was up',
      labelNames: ['frontend'],
      registers,
    });
    this.clientFailures = new Counter({
      name: 'kubeward_proxy_client_failures_total',
      help: 'Client connections closed because no upstream accepted',
      labelNames: ['frontend'],
      registers,
    });
    this.pacedWaits = new Counter({
      name: 'kubeward_proxy_paced_waits_total',
      help: "Waits of a client connection for a recovering upstream's pacing token (--recovery-rate)",
      labelNames: up,
      registers,
    });
    this.closedByProxy = new Counter({
      name: 'kubeward_proxy_closed_connections_total',
      help: 'Established connections the proxy closed, by why (dead, drained, shutdown)',
      labelNames: [...up, 'why'],
      registers,
    });
    this.rejected = new Counter({
      name: 'kubeward_proxy_rejected_connections_total',
      help: 'Client connections closed at accept, by why (cap: --max-connections or the fd budget)',
      labelNames: ['frontend', 'why'],
      registers,
    });
    this.relayPath = new Gauge({
      name: 'kubeward_proxy_relay_path',
      help: 'The data path of this process: 1 for handle (bare libuv handles), socket (net.Socket, --relay socket or the fallback) or native (--relay native: bytes moved in C)',
      labelNames: ['path'],
      registers,
    });
    registerSampled(registry, sample);
    registerFrontendSampled(registry, sample);
  }
}

function registerSampled(registry: Registry, sample: () => readonly FrontendSample[]): void {
  const registers = [registry];
  new Gauge({
    name: 'kubeward_proxy_upstream_state',
    help: 'The upstream state: 1 for the current one of unknown, up, down',
    labelNames: ['frontend', 'upstream', 'state'],
    registers,
    collect() {
      this.reset();
      for (const f of sample())
        for (const u of f.upstreams) for (const s of STATES) this.set({ frontend: f.name, upstream: u.key, state: s }, Number(u.state === s));
    },
  });
  new Gauge({
    name: 'kubeward_proxy_reachable_upstreams',
    help: 'Upstreams up and not drained; below 2 the frontend has no redundancy left',
    labelNames: ['frontend'],
    registers,
    collect() {
      this.reset();
      for (const f of sample()) this.set({ frontend: f.name }, f.upstreams.filter((u) => u.state === 'up' && !u.drained).length);
    },
  });
  new Gauge({
    name: 'kubeward_proxy_upstream_drained',
    help: '1 while an operator has drained the upstream',
    labelNames: ['frontend', 'upstream'],
    registers,
    collect() {
      this.reset();
      for (const f of sample()) for (const u of f.upstreams) this.set({ frontend: f.name, upstream: u.key }, Number(u.drained));
    },
  });
  new Gauge({
    name: 'kubeward_proxy_upstream_active_connections',
    help: 'Connections being set up or established to the upstream',
    labelNames: ['frontend', 'upstream'],
    registers,
    collect() {
      this.reset();
      for (const f of sample()) for (const u of f.upstreams) this.set({ frontend: f.name, upstream: u.key }, u.active);
    },
  });
  new Counter({
    name: 'kubeward_proxy_upstream_bytes_total',
    help: 'Bytes forwarded, by direction (to_upstream, to_client)',
    labelNames: ['frontend', 'upstream', 'direction'],
    registers,
    collect() {
      this.reset();
      for (const f of sample()) {
        for (const u of f.upstreams) {
          this.inc({ frontend: f.name, upstream: u.key, direction: 'to_upstream' }, u.bytesToUpstream);
          this.inc({ frontend: f.name, upstream: u.key, direction: 'to_client' }, u.bytesToClient);
        }
      }
    },
  });
}

function registerFrontendSampled(registry: Registry, sample: () => readonly FrontendSample[]): void {
  const registers = [registry];
  new Gauge({
    name: 'kubeward_proxy_local_fault',
    help: '1 while the health checks of the frontend hit a local fault (reason local: no fds, unreadable token, bad TLS material); upstream states are then kept',
    labelNames: ['frontend'],
    registers,
    collect() {
      this.reset();
      for (const f of sample()) this.set({ frontend: f.name }, Number(f.localFault));
    },
  });
  new Gauge({
    name: 'kubeward_proxy_connection_cap',
    help: 'Most client connections the frontend holds at once (--max-connections or the fd budget)',
    labelNames: ['frontend'],
    registers,
    collect() {
      this.reset();
      for (const f of sample()) this.set({ frontend: f.name }, f.connectionCap);
    },
  });
  new Gauge({
    name: 'kubeward_proxy_open_connections',
    help: 'Client connections open now (accepted, not yet closed)',
    labelNames: ['frontend'],
    registers,
    collect() {
      this.reset();
      for (const f of sample()) this.set({ frontend: f.name }, f.openConnections);
    },
  });
}
