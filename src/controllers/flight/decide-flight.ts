// One flight round's plan (pure): the six repairs and the route checks, each decided on its own so
// that a missing input (no group, unreadable Nodes, no router) only skips the repairs that need it.
import { decideGroupAssignment, decideGroupResync, decideGroupRules, pickGroup } from './decide-security-group.ts';
import { decideUnregistered } from './decide-unregistered.ts';
import { decideLabels, decideRoles } from './decide-labels.ts';
import { decideRouteHealth } from './decide-route-health.ts';
import type { FlightObservation, FlightOptions, FlightPlan } from './flight-types.ts';

export function decideFlight(obs: FlightObservation, o: FlightOptions): FlightPlan {
  const plan: FlightPlan = { actions: [], findings: [], conditions: [], memory: obs.memory };
  const { group, finding } = pickGroup(obs.groups, o.securityGroupName);
  if (finding) plan.findings.push(finding);
  if (group) {
    const rules = decideGroupRules(group, o.clusterCidr);
    plan.actions.push(...rules.actions);
    if (rules.finding) plan.findings.push(rules.finding);
    plan.actions.push(...decideGroupResync(group, obs.nodes, o.forceSecurityGroupResync));
  }
  // Assignment is by name, so it does not need the group's ID; but with zero or several groups of
  // that name Nova cannot pick one either.
  if (obs.groups !== undefined && !finding) plan.actions.push(...decideGroupAssignment(obs.instances, o.securityGroupName));
  const unregistered = decideUnregistered(obs.instances, obs.nodes, obs.nowMs, obs.memory, o);
  plan.actions.push(...unregistered.actions);
  plan.findings.push(...unregistered.findings);
  plan.memory = unregistered.memory;
  plan.actions.push(...decideRoles(obs.serviceUserRoles, o.wantedRoles));
  plan.actions.push(...decideLabels(obs.instances, obs.nodes, o));
  if (obs.routes !== undefined && obs.nodes !== undefined) {
    const health = decideRouteHealth(obs.routes, obs.instances, obs.nodes, o);
    plan.actions.push(...health.actions);
    plan.conditions.push(...health.conditions);
    plan.findings.push(...health.findings);
  }
  return plan;
}

export const DEFAULT_FLIGHT_TIMING = {
  softRebootAfterMs: 10 * 60_000,
  hardRebootAfterMs: 5 * 60_000,
  deleteAfterMs: 15 * 60_000,
  maxDeletionsPerRound: 1,
} as const;
