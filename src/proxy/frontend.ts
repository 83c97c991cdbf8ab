// One frontend: its listeners, upstream pool, health checks and connections. Accepts a client,
// picks an upstream, retries a failed connect on the next one inside the same client connection,
// then hands both sockets to the forwarder. Acts on the upstream list's verdicts (log, evict).
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../base/clock.ts';
import type { Logger } from '../base/logger.ts';
import { UsageError, describeError } from '../base/errors.ts';
import { formatHostPort, type HostPort } from '../config/fields.ts';
import type { ProbeResult } from '../probe/probe-result.ts';
import { ConnectionSet } from './connection-set.ts';
import { connectUpstream } from './connect-upstream.ts';
import { ForwardedConnection } from './forward-connection.ts';
import { HealthChecker } from './health-checker.ts';
import { pickUpstream } from './pick-upstream.ts';
import { herdSettings, type FrontendConfig, type LoadedHealthCheck } from './proxy-config.ts';
import type { FrontendSample, ProxyMetrics } from './proxy-metrics.ts';
import { RebalanceLoop } from './rebalance-loop.ts';
import { UpstreamList, type TransitionCause, type UpstreamEvent } from './upstream-list.ts';
import { probeUpstream } from './upstream-probe.ts';

export interface FrontendDeps {
  log: Logger;
  metrics: ProxyMetrics;
  clock: Clock;
  random: () => number;
  isLocal: (host: string) => boolean;
}

export interface FrontendCounters {
  accepted: number;
  /** Client connections closed because no upstream accepted: what clients see as failures. */
  failed: number;
  retries: number;
  failOpen: number;
  closedByProxy: number;
  /** Connections closed to move their clients to a less loaded upstream (included in closedByProxy). */
  rebalanced: number;
}

export class Frontend {
  readonly config: FrontendConfig;
  readonly list: UpstreamList;
  readonly counters: FrontendCounters = { accepted: 0, failed: 0, retries: 0, failOpen: 0, closedByProxy: 0, rebalanced: 0 };
  readonly conns = new ConnectionSet();
  /** Bound listen addresses (port 0 resolved). */
  readonly addresses: HostPort[] = [];
  readonly #deps: FrontendDeps;
  readonly #check: LoadedHealthCheck;
  readonly #targets: Map<string, HostPort>;
  readonly #checker: HealthChecker;
  readonly #rebalancer: RebalanceLoop;
  /** Slow start and rebalancing with defaults filled in, resolved once (not per connection). */
  #herd: ReturnType<typeof herdSettings>;
  readonly #servers: Server[] = [];
  #destroyed = false;

  constructor(config: FrontendConfig, check: LoadedHealthCheck, deps: FrontendDeps) {
    this.config = config;
    this.#deps = deps;
    this.#check = check;
    this.#herd = herdSettings(config);
    this.#targets = new Map(config.upstreams.map((u) => [formatHostPort(u), u]));
    const members = [...this.#targets].map(([key, u]) => ({ key, local: deps.isLocal(u.host) }));
    this.list = new UpstreamList(members, { rise: check.rise, fall: check.fall });
    this.#checker = new HealthChecker({
      intervalMs: check.intervalMs,
      clock: deps.clock,
      random: deps.random,
      probe: (key, signal) => probeUpstream(this.#targets.get(key)!, this.#check, signal),
      onResult: (key, result) => this.#onCheck(key, result),
    });
    this.#rebalancer = new RebalanceLoop({
      list: this.list,
      conns: this.conns,
      clock: deps.clock,
      random: deps.random,
      settings: () => this.#herd,
      onClose: (d) => {
        this.counters.closedByProxy++;
        this.counters.rebalanced++;
        this.#deps.metrics.closedByProxy.inc({ frontend: this.name, upstream: d.from, why: 'rebalance' });
        // At most one per interval: not the hot path.
        this.#deps.log.info({ frontend: this.name, from: d.from, to: d.to, spread: d.spread }, 'rebalancing: closed the oldest connection of the busiest upstream');
      },
    });
  }

  /** One rebalancing round now (tests and callers that drive it themselves). */
  rebalanceOnce(): ReturnType<RebalanceLoop['step']> {
    return this.#rebalancer.step();
  }

  get name(): string {
    return this.config.name;
  }

  /** Starts the health checks and the listeners; a listen failure is a usage error naming the address. */
  async start(): Promise<void> {
    this.#checker.sync([...this.#targets.keys()]);
    this.#rebalancer.start();
    for (const addr of this.config.listen) {
      const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (client) => this.#accept(client));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host: addr.host, port: addr.port, ipv6Only: addr.host.includes(':') }, () => {
          server.off('error', reject);
          resolve();
        });
      }).catch((err: unknown) => {
        throw new UsageError(`frontend "${this.name}": cannot listen on ${formatHostPort(addr)} (${describeError(err)}); free the port or pick another`, { cause: err });
      });
      server.on('error', (err) => this.#deps.log.error({ frontend: this.name, err: describeError(err) }, 'listener error'));
      this.#servers.push(server);
      this.addresses.push({ host: addr.host, port: (server.address() as AddressInfo).port });
    }
  }

  #accept(client: Socket): void {
    this.counters.accepted++;
    client.on('error', () => client.destroy()); // until the forwarder owns it
    void this.#forward(client);
  }

  async #forward(client: Socket): Promise<void> {
    const { list, config } = this;
    const maxAttempts = (config.maxRetries ?? list.all().length - 1) + 1;
    const tried = new Set<string>();
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const pick = pickUpstream(list.all(), tried, this.#deps.random, { now: this.#deps.clock.now(), slowStartMs: this.#herd.slowStartMs });
      if (!pick) break;
      tried.add(pick.key);
      if (attempt > 0) this.#count('retries');
      if (pick.failOpen) this.#count('failOpen');
      const target = this.#targets.get(pick.key)!;
      list.acquire(pick.key);
      const out = await connectUpstream({ host: target.host, port: target.port, timeoutMs: config.connectTimeoutMs });
      const labels = { frontend: this.name, upstream: pick.key };
      this.#deps.metrics.connectSeconds.observe({ ...labels, result: out.ok ? 'ok' : out.reason }, out.latencyMs / 1000);
      if (out.ok) {
        if (client.destroyed || this.#destroyed) {
          list.release(pick.key);
          out.socket.destroy();
          client.destroy();
          return;
        }
        this.#deps.metrics.connections.inc(labels);
        client.removeAllListeners('error');
        const conn = new ForwardedConnection(client, out.socket, pick.key, {
          idleTimeoutMs: config.idleTimeoutMs,
          startedAt: this.#deps.clock.now(),
          onClose: (c) => {
            list.release(c.upstreamKey);
            this.conns.remove(c);
          },
        });
        this.conns.add(conn);
        return;
      }
      list.release(pick.key);
      if (out.reason === 'refused' || out.reason === 'timeout' || out.reason === 'unreachable') {
        this.#apply(pick.key, list.recordConnectFailure(pick.key, out, this.#deps.clock.now()), 'connect');
      }
      if (client.destroyed) return;
    }
    this.#count('failed');
    client.destroy();
  }

  #count(what: 'retries' | 'failOpen' | 'failed'): void {
    this.counters[what]++;
    const m = what === 'retries' ? this.#deps.metrics.retries : what === 'failOpen' ? this.#deps.metrics.failOpen : this.#deps.metrics.clientFailures;
    m.inc({ frontend: this.name });
  }

  #onCheck(key: string, result: ProbeResult): void {
    const labels = { frontend: this.name, upstream: key };
    this.#deps.metrics.checks.inc({ ...labels, result: result.reason });
    this.#deps.metrics.checkSeconds.observe(labels, result.latencyMs / 1000);
    this.#apply(key, this.list.recordCheck(key, result, this.#deps.clock.now()), 'check');
  }

  #apply(key: string, event: UpstreamEvent, cause: TransitionCause): void {
    const t = event.transition;
    if (t) {
      const fields = { frontend: this.name, upstream: key, from: t.from, to: t.to, cause, reason: t.reason, evidence: t.detail };
      if (t.to === 'down') {
        this.#deps.metrics.ejections.inc({ frontend: this.name, upstream: key, cause });
        this.#deps.log.warn(fields, 'upstream down');
      } else {
        this.#deps.log.info(fields, 'upstream up');
      }
    }
    if (event.evict) this.#closeConnections(key, 'dead');
  }

  #closeConnections(key: string, why: 'dead' | 'drained'): number {
    const labels = { frontend: this.name, upstream: key, why };
    const n = this.conns.closeSpread(key, this.config.drainSpreadMs, () => {
      this.counters.closedByProxy++;
      this.#deps.metrics.closedByProxy.inc(labels);
    }, this.#deps.random);
    if (n > 0) this.#deps.log.warn({ ...labels, connections: n, spreadMs: this.config.drainSpreadMs }, 'closing connections, spread over the drain window');
    return n;
  }

  /** Operator drain (true) or undrain (false). Returns undefined for an unknown upstream. */
  setDrained(key: string, drained: boolean): { closing: number } | undefined {
    const event = this.list.setDrained(key, drained, this.#deps.clock.now());
    if (!event) return undefined;
    this.#deps.log.warn({ frontend: this.name, upstream: key, drained }, drained ? 'upstream drained by operator' : 'upstream undrained by operator');
    return { closing: event.evict ? this.#closeConnections(key, 'drained') : 0 };
  }

  sample(): FrontendSample {
    return {
      name: this.name,
      upstreams: this.list.all().map((u) => {
        const bytes = this.conns.bytesFor(u.key);
        return { key: u.key, state: u.state, drained: u.drained, active: u.active, bytesToUpstream: bytes.toUpstream, bytesToClient: bytes.toClient };
      }),
    };
  }

  /** Graceful: stop accepting, let connections finish for up to graceMs, then close the rest. */
  async close(graceMs: number): Promise<void> {
    // server.close() stops accepting at once; its callback would wait for every connection, so
    // the grace period is enforced here instead.
    const closed = Promise.all(this.#servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    await this.conns.waitIdle(graceMs);
    if (this.conns.size > 0) this.#deps.log.warn({ frontend: this.name, connections: this.conns.size }, 'shutdown grace over: closing the remaining connections');
    this.destroy();
    await Promise.all([closed, this.#checker.close(), this.#rebalancer.close()]);
  }

  /** Abortive: every listener, connection and check now. */
  destroy(): void {
    this.#destroyed = true;
    for (const s of this.#servers) s.close();
    this.conns.destroyAll();
    void this.#checker.close();
    void this.#rebalancer.close();
  }
}
