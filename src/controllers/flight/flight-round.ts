// One flight round for one cluster: observe (each input on its own, so one failing source only skips
// the repairs that need it), decide (pure), then carry out every action independently: one failing
// call is an event and a metric, never the end of the round. The signal is the leader's fence (the
// reconcile's abort): checked before, and passed into, every reboot, delete, metadata write, rule
// change and Node condition write; once it falls the round ends there, with no event or metric.
import type { Clock } from '../../base/clock.ts';
import { describeError } from '../../base/errors.ts';
import type { Logger } from '../../base/logger.ts';
import type { ClusterNodes } from '../managed-cluster/cluster-adapters.ts';
import type { EmitEvent } from '../managed-cluster/cluster-events.ts';
import type { ClusterNode } from '../managed-cluster/cluster-view.ts';
import { proveOwnership, type ProvisionerClaim } from '../managed-cluster/cluster-identity.ts';
import { routeLimitOf, type RouteWriteResult } from '../managed-cluster/route-writer.ts';
import type { ExtraRoute } from '../../clients/openstack/openstack-types.ts';
import { budgetKindOf, decideFlight } from './decide-flight.ts';
import type { FlightCloud } from './flight-cloud.ts';
import type { FlightMetrics } from './flight-metrics.ts';
import { emptyFlightMemory, type FlightAction, type FlightMemory, type FlightOptions, type FlightPlan, type RepairKind } from './flight-types.ts';
import { describeAction, nodeOfAction, repairOf } from './flight-action-text.ts';

export interface FlightRouteAdder {
  add(routerId: string, routes: ExtraRoute[], signal?: AbortSignal): Promise<RouteWriteResult>;
}

export interface FlightDeps {
  cloud: FlightCloud;
  nodes: ClusterNodes;
  routes: FlightRouteAdder;
  emit: EmitEvent;
  metrics: FlightMetrics;
  log: Logger;
  clock: Clock;
  /** Other ManagedClusters ("<namespace>/<name>") with this cluster's name (operator); default: none. */
  namesakes?: (signal?: AbortSignal) => Promise<string[]>;
}

export interface FlightTarget extends FlightOptions {
  /** Owner metadata the provisioner writes for this cluster (provisioner-claims.ts). */
  provisionerClaims?: ProvisionerClaim[];
  /** Earlier owner ids whose stamped servers are adopted (and re-stamped) under ownerId. */
  adoptOwners?: string[];
  /** The cluster's router; route checks are skipped without one. */
  routerId?: string;
  /** Check the service user's roles (needs a Keystone that answers; on by default). */
  checkRoles: boolean;
  dryRun: boolean;
}

export interface FlightRoundResult {
  plan: FlightPlan;
  done: FlightAction[];
  failed: { action: FlightAction; error: string }[];
}

export class FlightRunner {
  readonly #d: FlightDeps;
  readonly #t: FlightTarget;
  #memory: FlightMemory = emptyFlightMemory();
  #routeLimit: number | undefined;
  #findingReasons = new Set<string>();

  /** `memory`: an earlier runner's, for the same cluster and scope (its clients were replaced). */
  constructor(deps: FlightDeps, target: FlightTarget, memory?: FlightMemory) {
    this.#d = deps;
    this.#t = target;
    if (memory) this.#memory = memory;
  }

  get memory(): FlightMemory {
    return this.#memory;
  }

  async round(signal?: AbortSignal): Promise<FlightRoundResult> {
    const { cloud, nodes, metrics, log, clock } = this.#d;
    const labels = { cluster: this.#t.clusterName };
    const soft = async <T>(what: string, f: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await f();
      } catch (err) {
        log.warn({ cluster: this.#t.clusterName, err: describeError(err) }, `flight: cannot read ${what}; the repairs that need it wait`);
        return undefined;
      }
    };
    let servers;
    try {
      servers = await cloud.listServers(signal);
    } catch (err) {
      if (!signal?.aborted) metrics.failedRounds.inc(labels);
      throw err;
    }
    const nodeList: ClusterNode[] | undefined = await soft("the cluster's Nodes", () => nodes.list(signal));
    const groups = await soft('security groups', () => cloud.listGroups(this.#t.securityGroupName, signal));
    const roles = this.#t.checkRoles ? await soft('service user roles', () => cloud.serviceUserRoles(signal)) : undefined;
    const router = this.#t.routerId ? await soft('the router', () => cloud.getRouter(this.#t.routerId!, signal)) : undefined;
    // Unreadable: a name-keyed claim cannot be trusted, as with a namesake.
    const namesakes = this.#d.namesakes
      ? ((await soft('the other ManagedClusters', () => this.#d.namesakes!(signal))) ?? ['(ManagedCluster list unreadable)'])
      : [];
    const ownership = proveOwnership(servers, nodeList ?? [], {
      ownerId: this.#t.ownerId,
      ownerRef: this.#t.ownerRef,
      poolPrefixes: this.#t.pools.map((p) => p.prefix),
      provisionerClaims: this.#t.provisionerClaims,
      namesakes,
      adoptOwners: this.#t.adoptOwners,
    });
    const plan = decideFlight(
      {
        nowMs: clock.now(),
        instances: ownership.candidates.filter((c) => ownership.proven.has(c.id)),
        candidates: ownership.candidates,
        unknownServers: servers.filter((x) => x.status === 'UNKNOWN').length,
        duplicateNames: ownership.duplicateNames,
        previousOwners: ownership.previousOwners,
        conflicts: ownership.conflicts,
        nodes: nodeList,
        groups,
        serviceUserRoles: roles,
        routes: router?.routes,
        memory: this.#memory,
      },
      { ...this.#t, routeLimit: this.#routeLimit ?? this.#t.routeLimit },
    );
    this.#memory = plan.memory;
    const result: FlightRoundResult = { plan, done: [], failed: [] };
    if (plan.refusal) {
      metrics.refused.inc({ ...labels, reason: plan.refusal.code });
      log.warn(
        { cluster: this.#t.clusterName, reason: plan.refusal.code, detail: plan.refusal.message },
        'flight: refusing every destructive repair this round',
      );
    }
    for (const a of plan.heldBack) metrics.heldBack.inc({ ...labels, kind: budgetKindOf(a) ?? a.kind });
    for (const action of plan.actions) await this.#carryOut(action, result, signal);
    await this.#report(plan, signal);
    return result;
  }

  async #carryOut(action: FlightAction, result: FlightRoundResult, signal?: AbortSignal): Promise<void> {
    const repair: RepairKind = repairOf(action);
    const node = nodeOfAction(action);
    const labels = { cluster: this.#t.clusterName, repair, action: action.kind };
    signal?.throwIfAborted();
    if (this.#t.dryRun) {
      this.#d.metrics.repairs.inc({ ...labels, result: 'dry-run' });
      await this.#d.emit({ type: 'Normal', reason: 'FlightWouldRepair', message: `dry run: would ${describeAction(action)}`, node });
      return;
    }
    try {
      await this.#execute(action, signal);
      result.done.push(action);
      this.#d.metrics.repairs.inc({ ...labels, result: 'done' });
      await this.#d.emit({ type: 'Normal', reason: 'FlightRepaired', message: describeAction(action), node });
    } catch (err) {
      // The fence fell during the call: not a failed repair, the end of this replica's round.
      if (signal?.aborted) throw err;
      const error = describeError(err);
      result.failed.push({ action, error });
      this.#d.metrics.repairs.inc({ ...labels, result: 'failed' });
      if (action.kind === 'reboot') {
        // Not rebooted: the timeline must not advance as if it had been.
        const m = action.type === 'SOFT' ? this.#memory.softRebootAtMs : this.#memory.hardRebootAtMs;
        delete m[action.instanceId];
      }
      await this.#d.emit({ type: 'Warning', reason: 'FlightRepairFailed', message: `could not ${describeAction(action)}: ${error}`, node });
    }
  }

  async #execute(a: FlightAction, signal?: AbortSignal): Promise<void> {
    const c = this.#d.cloud;
    switch (a.kind) {
      case 'create-rule':
        await c.createRule(
          {
            security_group_id: a.groupId,
            direction: 'ingress',
            ethertype: a.ethertype,
            protocol: a.protocol,
            remote_ip_prefix: a.remoteCidr,
            description: 'kubeward: pod traffic of the cluster',
          },
          signal,
        );
        return;
      case 'resync-security-group': {
        // A rule nobody can match (TEST-NET-1/32, port 9) added and removed again: agents resync the group.
        const id = await c.createRule(
          {
            security_group_id: a.groupId,
            direction: 'ingress',
            ethertype: 'IPv4',
            protocol: 'tcp',
            port_range_min: 9,
            port_range_max: 9,
            remote_ip_prefix: '192.0.2.1/32',
            description: 'kubeward: forced resync',
          },
          signal,
        );
        // A fence falling between the two leaves the unmatchable rule behind: it lets nothing in.
        signal?.throwIfAborted();
        await c.deleteRule(id, signal);
        return;
      }
      case 'add-security-group':
        return c.addSecurityGroup(a.instanceId, a.group, signal);
      case 'reboot':
        return c.reboot(a.instanceId, a.type, signal);
      case 'delete-instance':
        return c.deleteServer(a.instanceId, signal);
      case 'assign-role':
        return c.assignRole(a.role, signal);
      case 'add-tags':
        for (const tag of a.tags) {
          signal?.throwIfAborted();
          await c.addTag(a.instanceId, tag, signal);
        }
        return;
      case 'merge-metadata':
        return c.mergeMetadata(a.instanceId, a.metadata, signal);
      case 'add-route':
        try {
          await this.#d.routes.add(this.#t.routerId!, [a.route], signal);
        } catch (err) {
          this.#routeLimit = routeLimitOf(err) ?? this.#routeLimit;
          throw err;
        }
    }
  }

  async #report(plan: FlightPlan, signal?: AbortSignal): Promise<void> {
    const { metrics, nodes, emit, clock } = this.#d;
    const cluster = this.#t.clusterName;
    // A fence that fell while the view was read: this replica neither acts nor reports.
    signal?.throwIfAborted();
    // Reasons of the last round that are gone now read 0, other clusters' series are untouched.
    for (const reason of this.#findingReasons) metrics.findings.set({ cluster, reason }, 0);
    this.#findingReasons = new Set(plan.findings.map((f) => f.reason));
    for (const f of plan.findings) {
      metrics.findings.inc({ cluster, reason: f.reason });
      await emit({ type: 'Warning', reason: f.reason, message: f.message, node: f.node });
    }
    for (const type of ['kubeward.io/RouteMissing', 'kubeward.io/RouteConflict'] as const) {
      metrics.nodesWithRouteProblems.set({ cluster, condition: type }, plan.conditions.filter((c) => c.type === type && c.status === 'True').length);
    }
    if (this.#t.dryRun) return;
    for (const c of plan.conditions) {
      signal?.throwIfAborted();
      try {
        const changed = await nodes.setCondition(c.node, { type: c.type, status: c.status, reason: c.reason, message: c.message }, clock.now(), signal);
        if (changed && c.status === 'True') await emit({ type: 'Warning', reason: c.reason, message: c.message, node: c.node });
      } catch (err) {
        if (signal?.aborted) throw err;
        this.#d.log.warn({ cluster, node: c.node, condition: c.type, err: describeError(err) }, 'could not set Node condition');
      }
    }
  }
}
