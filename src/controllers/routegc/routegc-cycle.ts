// One routegc cycle for one cluster: observe (router, then the cluster's instances and Nodes only if
// the router has routes of the cluster), decide (pure), remove the confirmed routes, report.
// Nothing is half-done: a failure before the write changes nothing, and the write is one call.
// The signal is the leader's fence (the reconcile's abort): checked before, and passed into, every
// route removal, so a replica that lost its lease removes nothing more, even mid-cycle.
import { systemClock, type Clock } from '../../base/clock.ts';
import { KubewardError, describeError } from '../../base/errors.ts';
import type { Logger } from '../../base/logger.ts';
import type { Router } from '../../clients/openstack/openstack-types.ts';
import { ipKey } from '../../base/ip.ts';
import { validNextHops, type ClusterInstance } from '../managed-cluster/cluster-view.ts';
import { proveOwnership, type ClusterIdentity } from '../managed-cluster/cluster-identity.ts';
import { clusterCidrProblem } from '../managed-cluster/cidr-scope.ts';
import type { ClusterNodes } from '../managed-cluster/cluster-adapters.ts';
import type { EmitEvent } from '../managed-cluster/cluster-events.ts';
import {
  decideRouteGc,
  nodeScopeRefusal,
  ownRoutes,
  terminationRoutes,
  type RouteFinding,
  type RouteGcDecision,
  type RouteGcMemory,
} from './decide-routegc.ts';
import type { RouteGcMetrics } from './routegc-metrics.ts';
import type { RouteWriteResult } from '../managed-cluster/route-writer.ts';

export interface RouteGcCloud {
  getRouter(id: string, signal?: AbortSignal): Promise<Router | undefined>;
  /** Every server of the project (the cluster's are picked from them). */
  listServers(signal?: AbortSignal): Promise<ClusterInstance[]>;
  /** Addresses (ipKey form) held by any port on the router's networks, whoever owns it (routegc-cloud.ts). */
  heldAddresses(routerId: string, signal?: AbortSignal): Promise<Set<string>>;
}

export interface RouteGcWriter {
  remove(routerId: string, routes: RouteFinding['route'][], signal?: AbortSignal): Promise<RouteWriteResult>;
}

export interface RouteGcTarget {
  cluster: string;
  routerId: string;
  clusterCidr: string;
  /** Who the cluster is in OpenStack: its owner ID and pool prefixes ("kks-k1-small-"), see cluster-identity.ts. */
  identity: ClusterIdentity;
  routeLimit: number;
  routeLimitHeadroom?: number;
  maxShrinkFraction?: number;
  /** A suspect route is removed only when first seen at least this long ago (default 0: the next cycle). */
  confirmAfterMs?: number;
  /** Route removals per cycle (default 3). */
  maxRemovalsPerCycle?: number;
  /** Accept a cluster CIDR wider than /8 (never /0). */
  allowWide?: boolean;
  /** Accept a cluster CIDR far wider than the Nodes' pod CIDRs (cidr-scope.ts MAX_CIDR_SLACK_BITS). */
  forceClusterCidr?: boolean;
  dryRun: boolean;
}

export interface RouteGcDeps {
  cloud: RouteGcCloud;
  writer: RouteGcWriter;
  nodes: ClusterNodes;
  emit: EmitEvent;
  metrics: RouteGcMetrics;
  log: Logger;
  /** For the time between the two sightings of a removal (default: the system clock). */
  clock?: Clock;
}

export interface RouteGcCycleResult {
  decision?: RouteGcDecision;
  /** Routes removed now (or that a dry run would remove). */
  removed: RouteFinding[];
  conflicts: number;
  skipped?: string;
}

export class RouteGcRunner {
  readonly #d: RouteGcDeps;
  readonly #t: RouteGcTarget;
  #memory: RouteGcMemory = { suspects: {} };
  #limitWarned = false;
  last: RouteGcCycleResult | undefined;

  /** `memory`: an earlier runner's, for the same cluster and scope (its clients were replaced). */
  constructor(deps: RouteGcDeps, target: RouteGcTarget, memory?: RouteGcMemory) {
    this.#d = deps;
    this.#t = target;
    if (memory) this.#memory = memory;
  }

  get memory(): RouteGcMemory {
    return this.#memory;
  }

  async cycle(signal?: AbortSignal): Promise<RouteGcCycleResult> {
    const { metrics, log } = this.#d;
    const labels = { cluster: this.#t.cluster };
    try {
      const result = await this.#cycle(labels, signal);
      this.last = result;
      return result;
    } catch (err) {
      if (signal?.aborted) throw err; // not a failure of the cycle: this replica stopped acting
      metrics.failedCycles.inc(labels);
      log.warn(
        { cluster: this.#t.cluster, err: describeError(err) },
        'routegc cycle failed; nothing was changed by the failed step, the next cycle starts over',
      );
      throw err;
    }
  }

  async #cycle(labels: { cluster: string }, signal?: AbortSignal): Promise<RouteGcCycleResult> {
    const { cloud, nodes, metrics } = this.#d;
    const router = await cloud.getRouter(this.#t.routerId, signal);
    if (!router) throw new KubewardError('E_NOT_FOUND', `router ${this.#t.routerId} does not exist`);
    metrics.routesSeen.set(labels, router.routes.length);
    metrics.routeLimit.set(labels, this.#t.routeLimit);
    // A scope that is not a valid, narrow enough CIDR reads nothing more: the decision refuses it.
    const ours = clusterCidrProblem(this.#t.clusterCidr, this.#t) === undefined ? ownRoutes(router.routes, this.#t.clusterCidr, this.#t) : [];
    // No route of the cluster: nothing to resolve, so neither Nova nor the cluster's API is asked (R2).
    const nodeList = ours.length ? await nodes.list(signal) : [];
    const servers = ours.length ? await cloud.listServers(signal) : [];
    // Next hops of every candidate stay valid: protecting a route never needs proof, removing one does.
    const { candidates } = proveOwnership(servers, nodeList, this.#t.identity);
    const unknownServers = servers.filter((s) => s.status === 'UNKNOWN').length;
    // Ports are read only when some route's next hop is none of the cluster's: only then can one be orphaned.
    const valid = validNextHops(candidates, nodeList);
    const heldHops = ours.some((r) => !valid.has(ipKey(r.nexthop))) ? await cloud.heldAddresses(this.#t.routerId, signal) : new Set<string>();
    const decision = decideRouteGc(
      {
        nowMs: (this.#d.clock ?? systemClock).now(),
        routes: router.routes,
        instances: candidates,
        nodes: nodeList,
        heldHops,
        unknownServers,
        memory: this.#memory,
      },
      { ...this.#t, hasInstancePrefixes: this.#t.identity.poolPrefixes.length > 0 },
    );
    this.#memory = decision.memory;
    metrics.routesOrphaned.set(labels, decision.counts.orphaned);
    metrics.routesDuplicate.set(labels, decision.counts.duplicate);
    // A fence that fell while the view was read: this replica neither acts nor reports.
    signal?.throwIfAborted();
    await this.#reportLimit(decision);
    if (decision.refusal) {
      metrics.refused.inc({ ...labels, reason: decision.refusalCode ?? 'Refused' });
      await this.#d.emit({ type: 'Warning', reason: 'RouteGCRefused', message: `not removing routes (${decision.refusalCode}): ${decision.refusal}` });
      return { decision, removed: [], conflicts: 0, skipped: decision.refusal };
    }
    if (decision.heldBack.length) {
      metrics.heldBack.inc({ ...labels, kind: 'route-removal' }, decision.heldBack.length);
      await this.#d.emit({
        type: 'Warning',
        reason: 'RouteGCBudgetExhausted',
        message: `${decision.heldBack.length} confirmed route removal(s) wait for a later cycle: at most ${decision.remove.length} per cycle (${decision.heldBack.map((f) => `${f.route.destination} via ${f.route.nexthop}`).join(', ')})`,
      });
    }
    for (const u of decision.unresolved)
      await this.#d.emit({ type: 'Warning', reason: 'RouteDuplicateUnresolved', message: `${u.route.destination} via ${u.route.nexthop}: ${u.detail}` });
    for (const h of decision.heldByPort)
      this.#d.log.info({ cluster: this.#t.cluster, route: h.route, detail: h.detail }, 'route kept: a live port holds its next hop');
    for (const p of decision.pending)
      this.#d.log.info({ cluster: this.#t.cluster, route: p.route, reason: p.reason, detail: p.detail }, 'route suspect; removed next cycle if still so');
    if (decision.remove.length === 0) return { decision, removed: [], conflicts: 0 };
    if (this.#t.dryRun) {
      for (const f of decision.remove) {
        metrics.wouldRemove.inc({ ...labels, reason: f.reason });
        await this.#d.emit({
          type: 'Normal',
          reason: 'RouteWouldBeRemoved',
          message: `dry run: would remove ${f.route.destination} via ${f.route.nexthop} (${f.detail})`,
        });
      }
      return { decision, removed: decision.remove, conflicts: 0 };
    }
    signal?.throwIfAborted();
    const write = await this.#d.writer.remove(
      this.#t.routerId,
      decision.remove.map((f) => f.route),
      signal,
    );
    metrics.conflicts.inc(labels, write.conflicts);
    if (write.raced)
      this.#d.log.warn(
        { cluster: this.#t.cluster, router: this.#t.routerId },
        'another writer changed the router within the round trip of our full-list write; its change may be lost (Neutron offers no conditional write here)',
      );
    const removed = decision.remove.filter((f) => write.changed.some((c) => c.destination === f.route.destination && c.nexthop === f.route.nexthop));
    for (const f of removed) {
      metrics.removed.inc({ ...labels, reason: f.reason });
      await this.#d.emit({
        type: 'Normal',
        reason: f.reason === 'orphaned' ? 'RemovedOrphanedRoute' : 'RemovedDuplicateRoute',
        message: `removed ${f.route.destination} via ${f.route.nexthop} (${f.detail}; ${write.method})`,
      });
    }
    return { decision, removed, conflicts: write.conflicts };
  }

  async #reportLimit(d: RouteGcDecision): Promise<void> {
    const { count, limit, approaching } = d.routeLimit;
    this.#d.metrics.routeLimitApproaching.set({ cluster: this.#t.cluster }, approaching ? 1 : 0);
    // One event when the router crosses into the warning zone, not one per cycle.
    if (approaching && !this.#limitWarned) {
      await this.#d.emit({
        type: 'Warning',
        reason: 'RouteLimitApproaching',
        message: `the router holds ${count} of at most ${limit} routes (Neutron max_routes); every Node needs one, so the cluster cannot grow much further`,
      });
    }
    this.#limitWarned = approaching;
  }

  /**
   * Termination: removes the routes of the cluster CIDR whose next hop was the cluster's or is held
   * by no port (terminationRoutes), and polls until the router shows none of those, or the timeout
   * passes. A route whose next hop another owner's live port holds stays (event
   * RouteTerminationKept). Returns the removable routes still there (empty when done).
   */
  async removeAll(clock: Clock, opts: { timeoutMs: number; pollMs: number; signal?: AbortSignal }): Promise<RouteFinding['route'][]> {
    const deadline = clock.now() + opts.timeoutMs;
    let reportedForeign = '';
    let refusal: string | undefined;
    const left = async () => {
      const router = await this.#d.cloud.getRouter(this.#t.routerId, opts.signal);
      // Throws for a /0 or too wide a CIDR: termination never removes "every route".
      const inCidr = router ? ownRoutes(router.routes, this.#t.clusterCidr, this.#t) : [];
      if (!router || inCidr.length === 0) return [];
      // The cluster's API may be gone at termination: without its Nodes, fewer next hops are the
      // cluster's, so fewer routes go (never more).
      const nodeList = await this.#d.nodes.list(opts.signal).catch((err: unknown) => {
        if (opts.signal?.aborted) throw err;
        return [];
      });
      // The Nodes that can be read still bound the scope, as in a cycle: a cluster CIDR wider than their
      // pod CIDRs need, or one that misses them, may hold another cluster's routes.
      const scope = nodeScopeRefusal(this.#t.clusterCidr, nodeList, this.#t);
      if (scope) {
        if (refusal !== scope.message)
          await this.#d.emit({ type: 'Warning', reason: 'RouteGCRefused', message: `termination removes no route (${scope.code}): ${scope.message}` });
        refusal = scope.message;
        return inCidr;
      }
      refusal = undefined;
      const servers = await this.#d.cloud.listServers(opts.signal);
      const own = proveOwnership(servers, nodeList, this.#t.identity);
      const clusterHops = validNextHops(
        own.candidates.filter((c) => own.proven.has(c.id)),
        nodeList,
      );
      const heldHops = await this.#d.cloud.heldAddresses(this.#t.routerId, opts.signal);
      const split = terminationRoutes(router.routes, this.#t.clusterCidr, { clusterHops, heldHops }, this.#t);
      const foreign = split.foreign.map((r) => `${r.destination} via ${r.nexthop}`).join(', ');
      if (foreign && foreign !== reportedForeign) {
        reportedForeign = foreign;
        await this.#d.emit({
          type: 'Warning',
          reason: 'RouteTerminationKept',
          message: `termination keeps ${split.foreign.length} route(s) of the cluster CIDR whose next hop a port of another owner holds: ${foreign}`,
        });
      }
      return split.remove;
    };
    for (;;) {
      const routes = await left();
      if (routes.length === 0 || refusal !== undefined) return routes;
      if (this.#t.dryRun) {
        for (const r of routes)
          await this.#d.emit({ type: 'Normal', reason: 'RouteWouldBeRemoved', message: `dry run: termination would remove ${r.destination} via ${r.nexthop}` });
        return routes;
      }
      opts.signal?.throwIfAborted();
      try {
        const write = await this.#d.writer.remove(this.#t.routerId, routes, opts.signal);
        this.#d.metrics.removed.inc({ cluster: this.#t.cluster, reason: 'termination' }, write.changed.length);
        this.#d.metrics.conflicts.inc({ cluster: this.#t.cluster }, write.conflicts);
      } catch (err) {
        if (opts.signal?.aborted) throw err; // the fence fell: no retry, no further pass
        this.#d.log.warn({ cluster: this.#t.cluster, err: describeError(err) }, 'termination route clean-up failed; retrying');
      }
      // A zero timeout is one pass: write once, report what is still there.
      if (clock.now() >= deadline) return left();
      await clock.sleep(opts.pollMs, opts.signal);
    }
  }
}
