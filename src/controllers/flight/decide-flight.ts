// One flight round's plan (pure): the six repairs and the route checks, each decided on its own so
// that a missing input (no group, unreadable Nodes, no router) only skips the repairs that need it;
// then the safety rules every destructive action passes through: a validated scope, no destruction
// while the view is in doubt, and per-round budgets. Acts only on proven instances (the runner
// passes those as `instances`).
import { applyBudgets, DEFAULT_BUDGETS, type BudgetKind, type Budgets } from '../managed-cluster/blast-budget.ts';
import { parseCidr } from '../../base/ip.ts';
import { clusterCidrProblem, podCidrsOutside } from '../managed-cluster/cidr-scope.ts';
import { doubtAboutView, instanceListDoubt, viewCounts } from '../managed-cluster/view-doubt.ts';
import { decideGroupAssignment, decideGroupResync, decideGroupRules, pickGroup } from './decide-security-group.ts';
import { decideUnregistered } from './decide-unregistered.ts';
import { decideLabels, decideRoles } from './decide-labels.ts';
import { decideRouteHealth } from './decide-route-health.ts';
import type { FlightAction, FlightFinding, FlightObservation, FlightOptions, FlightPlan } from './flight-types.ts';

/** Why a round destroys nothing: a doubtful view (view-doubt.ts) or an owner change. */
interface Doubt {
  code: string;
  message: string;
}

/** The budget an action spends; role assignments and route adds are not destructive. */
export function budgetKindOf(a: FlightAction): BudgetKind | undefined {
  switch (a.kind) {
    case 'reboot':
      return 'reboot';
    case 'delete-instance':
      return 'delete';
    case 'add-tags':
    case 'merge-metadata':
      return 'metadata';
    case 'create-rule':
    case 'resync-security-group':
    case 'add-security-group':
      return 'rule';
    default:
      return undefined;
  }
}

/** Actions that change an instance or what reaches it: none of them while the view is in doubt. */
const HELD_ON_DOUBT = new Set<FlightAction['kind']>([
  'reboot',
  'delete-instance',
  'add-tags',
  'merge-metadata',
  'add-security-group',
  'create-rule',
  'resync-security-group',
  'add-route',
]);

export function budgetsOf(o: FlightOptions): Budgets {
  return {
    ...DEFAULT_BUDGETS,
    delete: o.maxDeletionsPerRound,
    reboot: o.maxRebootsPerRound ?? DEFAULT_BUDGETS.reboot,
    metadata: o.maxMetadataWritesPerRound ?? DEFAULT_BUDGETS.metadata,
    rule: o.maxRuleChangesPerRound ?? DEFAULT_BUDGETS.rule,
  };
}

export function decideFlight(obs: FlightObservation, o: FlightOptions): FlightPlan {
  const plan: FlightPlan = { actions: [], heldBack: [], findings: [], conditions: [], memory: obs.memory };
  const scope = scopeFinding(obs, o);
  if (scope) plan.findings.push(scope);
  const { group, finding } = pickGroup(obs.groups, o.securityGroupName);
  if (finding) plan.findings.push(finding);
  if (group && !scope) {
    const rules = decideGroupRules(group, o.clusterCidr, { nodes: obs.nodes, force: o.forceClusterCidr });
    plan.actions.push(...rules.actions);
    if (rules.finding) plan.findings.push(rules.finding);
    plan.actions.push(...decideGroupResync(group, obs.nodes, o.forceSecurityGroupResync));
  }
  // Assignment is by name, so it does not need the group's ID; but with zero or several groups of
  // that name Nova cannot pick one either.
  if (obs.groups !== undefined && !finding) plan.actions.push(...decideGroupAssignment(obs.instances, o.securityGroupName));
  const known = new Set([...(obs.candidates ?? obs.instances), ...obs.instances].map((i) => i.id));
  const unregistered = decideUnregistered(obs.instances, obs.nodes, obs.nowMs, obs.memory, o, known);
  plan.actions.push(...unregistered.actions);
  plan.findings.push(...unregistered.findings);
  plan.memory = unregistered.memory;
  plan.actions.push(...decideRoles(obs.serviceUserRoles, o.wantedRoles));
  plan.actions.push(...decideLabels(obs.instances, obs.nodes, o));
  if (obs.routes !== undefined && obs.nodes !== undefined) {
    const health = decideRouteHealth(obs.routes, obs.candidates ?? obs.instances, obs.nodes, o);
    plan.actions.push(...(scope ? health.actions.filter((a) => a.kind !== 'add-route') : health.actions));
    plan.conditions.push(...health.conditions);
    plan.findings.push(...health.findings);
  }
  for (const name of obs.duplicateNames ?? []) {
    plan.findings.push({
      repair: 'unregistered-instances',
      reason: 'DuplicateInstanceName',
      message: `several servers are named ${name}: a name cannot tell them apart, so none of them is touched`,
    });
  }
  plan.findings.push(...conflictFindings(obs));
  const doubt = ownerChanged(obs) ?? viewDoubt(obs, o, plan.actions);
  if (doubt) return refuse(plan, obs, doubt);
  plan.memory = { ...plan.memory, lastNodeCount: obs.nodes?.length ?? plan.memory.lastNodeCount, lastInstanceCount: obs.instances.length };
  return withinBudgets(plan, o);
}

/** A cluster CIDR that is no valid scope, or that does not hold the Nodes' pod CIDRs. */
function scopeFinding(obs: FlightObservation, o: FlightOptions): FlightFinding | undefined {
  const problem = clusterCidrProblem(o.clusterCidr, o);
  if (problem) return { repair: 'security-group-rules', reason: 'ClusterCIDRInvalid', message: `no rule or route is changed: ${problem}` };
  const outside = obs.nodes ? podCidrsOutside(parseCidr(o.clusterCidr)!, obs.nodes) : [];
  if (outside.length)
    return {
      repair: 'security-group-rules',
      reason: 'PodCIDROutsideClusterCIDR',
      message: `no rule or route is changed: Node pod CIDRs lie outside ${o.clusterCidr} (${outside.slice(0, 5).join(', ')})`,
    };
  return undefined;
}

function viewDoubt(obs: FlightObservation, o: FlightOptions, actions: readonly FlightAction[]): Doubt | undefined {
  // Without Nodes, decideUnregistered already held back every reboot and deletion; the instance list
  // still decides whether this round's writes can trust it.
  if (obs.nodes === undefined)
    return instanceListDoubt(
      { instances: obs.instances.length, unknownServers: obs.unknownServers ?? 0, lastInstances: obs.memory.lastInstanceCount },
      { maxShrinkFraction: o.maxShrinkFraction },
    );
  const doubt = doubtAboutView(viewCounts({ nodes: obs.nodes, instances: obs.instances, unknownServers: obs.unknownServers, memory: obs.memory }), {
    maxShrinkFraction: o.maxShrinkFraction,
  });
  if (doubt) return doubt;
  // A Node list that hides most of the cluster makes most instances look unregistered at once; Nova
  // marking most of them ERROR at once (a cell or hypervisor problem, an admin's bulk reset-state)
  // is no more a reason to delete them all.
  const due = new Set(actions.filter((a) => a.kind === 'reboot' || a.kind === 'delete-instance').map((a) => ('instanceId' in a ? a.instanceId : '')));
  if (due.size >= 2 && due.size * 2 > obs.instances.length) {
    return {
      code: 'NodeListShrunk',
      message: `${due.size} of the cluster's ${obs.instances.length} instances are due for a reboot or deletion at once (no Node, or vm_state error): the view is more likely wrong than the instances`,
    };
  }
  return undefined;
}

/** Servers stamped by an earlier owner of this cluster (a restore or re-apply gave it a new UID): nothing destructive until adopted. */
function ownerChanged(obs: FlightObservation): Doubt | undefined {
  const previous = [...(obs.previousOwners ?? new Map<string, string[]>())].sort(([, a], [, b]) => b.length - a.length);
  if (previous.length === 0) return undefined;
  const [owner, ids] = previous[0]!;
  const others = previous.slice(1).reduce((n, [, x]) => n + x.length, 0);
  return {
    code: 'OwnerChanged',
    message:
      `${ids.length} server(s) carry owner id ${owner}, an earlier ManagedCluster of this name (re-created with a new UID)` +
      `${others ? `, and ${others} more server(s) carry other earlier owner ids` : ''}: nothing is rebooted, deleted or stamped until they are adopted ` +
      `(annotate the ManagedCluster kubeward.io/adopt-owner=${owner}; kubeward flight --adopt-owner ${owner})`,
  };
}

/** One finding per server two clusters could both claim; the runner sends it as an event on the ManagedCluster. */
function conflictFindings(obs: FlightObservation): FlightFinding[] {
  const seen = new Set<string>();
  return (obs.conflicts ?? []).flatMap((c) => {
    if (seen.has(c.instanceId)) return [];
    seen.add(c.instanceId);
    return [{ repair: 'unregistered-instances', reason: 'OwnerConflict', message: `server ${c.instanceName} (${c.instanceId}) is left alone: ${c.why}` }];
  });
}

function refuse(plan: FlightPlan, obs: FlightObservation, doubt: Doubt): FlightPlan {
  const held = plan.actions.filter((a) => HELD_ON_DOUBT.has(a.kind));
  return {
    ...plan,
    refusal: doubt,
    actions: plan.actions.filter((a) => !HELD_ON_DOUBT.has(a.kind)),
    findings: [
      ...plan.findings,
      {
        repair: 'unregistered-instances',
        reason: doubt.code,
        message: `no reboot, deletion, label or rule change this round${held.length ? ` (${held.length} held back)` : ''}: ${doubt.message}`,
      },
    ],
    // The reboot timeline does not move on a view that is not trusted; the counts do, so a lasting
    // change is judged against itself next round (an empty list stays refused).
    memory: { ...obs.memory, lastNodeCount: obs.nodes?.length, lastInstanceCount: obs.instances.length },
  };
}

function withinBudgets(plan: FlightPlan, o: FlightOptions): FlightPlan {
  const budgets = budgetsOf(o);
  const b = applyBudgets(plan.actions, budgetKindOf, budgets);
  if (b.heldBack.length === 0) return plan;
  const memory = { ...plan.memory, softRebootAtMs: { ...plan.memory.softRebootAtMs }, hardRebootAtMs: { ...plan.memory.hardRebootAtMs } };
  for (const a of b.heldBack) {
    // A reboot held back did not happen: the timeline must not advance as if it had.
    if (a.kind !== 'reboot') continue;
    delete (a.type === 'SOFT' ? memory.softRebootAtMs : memory.hardRebootAtMs)[a.instanceId];
  }
  const findings = Object.entries(b.heldBackByKind).map(([kind, n]): FlightFinding => ({
    repair: kind === 'delete' || kind === 'reboot' ? 'unregistered-instances' : kind === 'metadata' ? 'tags-and-metadata' : 'security-group-rules',
    reason: 'BudgetExhausted',
    message: `at most ${budgets[kind as BudgetKind]} ${kind} action(s) per round: ${n} wait for a later round`,
  }));
  return { ...plan, actions: b.allowed, heldBack: b.heldBack, findings: [...plan.findings, ...findings], memory };
}

export const DEFAULT_FLIGHT_TIMING = {
  softRebootAfterMs: 10 * 60_000,
  hardRebootAfterMs: 5 * 60_000,
  deleteAfterMs: 15 * 60_000,
  maxDeletionsPerRound: 1,
} as const;
