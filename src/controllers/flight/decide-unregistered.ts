// Repairs 3 and 4 (pure): instances that never became Nodes get a soft reboot, then a hard reboot,
// then deletion; errored instances are deleted. Nothing happens without a readable Node list; an
// instance whose Node existed once is left alone; and an instance a Node protects (matched by
// providerID, name or address, and not NotReady) is never rebooted or deleted, whatever Nova says of
// it: a failed live migration or an admin's reset-state leaves vm_state error on a working Node.
// Budgets and doubt are decide-flight's.
import { ipKey } from '../../base/ip.ts';
import { mapInstancesToNodes, type ClusterInstance, type ClusterNode } from '../managed-cluster/cluster-view.ts';
import { REGISTERED_METADATA_KEY, type FlightAction, type FlightFinding, type FlightMemory, type FlightOptions } from './flight-types.ts';
import { isErroring, isRunning, isStarting, isStopping } from './instance-state.ts';

export type TimelineOptions = Pick<FlightOptions, 'softRebootAfterMs' | 'hardRebootAfterMs' | 'deleteAfterMs' | 'rebootBeforeDelete'>;

export interface UnregisteredDecision {
  actions: FlightAction[];
  findings: FlightFinding[];
  memory: FlightMemory;
}

type Step = { kind: 'wait' } | { kind: 'reboot'; type: 'SOFT' | 'HARD' } | { kind: 'delete' };

/** Where one never-registered instance stands on the soft → hard → delete timeline. */
export function nextStep(inst: ClusterInstance, nowMs: number, memory: FlightMemory, o: TimelineOptions): Step {
  const age = nowMs - inst.createdMs;
  const total = o.softRebootAfterMs + o.hardRebootAfterMs + o.deleteAfterMs;
  // Reboots of a building instance are refused by Nova; one stuck that long is deleted.
  if (!o.rebootBeforeDelete || isStarting(inst)) return age >= total ? { kind: 'delete' } : { kind: 'wait' };
  const soft = memory.softRebootAtMs[inst.id];
  const hard = memory.hardRebootAtMs[inst.id];
  if (hard !== undefined) return nowMs - hard >= o.deleteAfterMs ? { kind: 'delete' } : { kind: 'wait' };
  if (soft !== undefined) return nowMs - soft >= o.hardRebootAfterMs ? { kind: 'reboot', type: 'HARD' } : { kind: 'wait' };
  if (age < o.softRebootAfterMs) return { kind: 'wait' };
  // Nova refuses a soft reboot of a server that is not running (SHUTOFF, PAUSED): go hard at once.
  return { kind: 'reboot', type: isRunning(inst) ? 'SOFT' : 'HARD' };
}

/** A Node not known to be NotReady that matches the instance by providerID, name or address: it protects it. */
export function protectingNode(inst: ClusterInstance, nodes: readonly ClusterNode[]): ClusterNode | undefined {
  const addrs = new Set(inst.addresses.map(ipKey));
  const matches = (n: ClusterNode) => n.instanceId === inst.id || (inst.name !== '' && n.name === inst.name) || n.addresses.some((a) => addrs.has(ipKey(a)));
  return nodes.find((n) => n.ready !== false && matches(n));
}

/**
 * A Node whose providerID names a server that no longer exists, with this instance's name and one of
 * its addresses: the server was re-created under the Node (same name, same port), so the instance is
 * registered and the providerID is stale.
 */
export function staleProviderNode(inst: ClusterInstance, nodes: readonly ClusterNode[], knownIds: ReadonlySet<string>): ClusterNode | undefined {
  const addrs = new Set(inst.addresses.map(ipKey));
  return nodes.find(
    (n) =>
      n.instanceId !== undefined && !knownIds.has(n.instanceId) && inst.name !== '' && n.name === inst.name && n.addresses.some((a) => addrs.has(ipKey(a))),
  );
}

export function decideUnregistered(
  instances: readonly ClusterInstance[],
  nodes: readonly ClusterNode[] | undefined,
  nowMs: number,
  memory: FlightMemory,
  o: TimelineOptions,
  /** Every server the round saw that could be the cluster's: a providerID naming none of them is stale. Default: instances. */
  knownIds: ReadonlySet<string> = new Set(instances.map((i) => i.id)),
): UnregisteredDecision {
  if (nodes === undefined) {
    const n = instances.filter((i) => isErroring(i)).length;
    return {
      actions: [],
      findings: [
        {
          repair: 'unregistered-instances',
          reason: 'NodesUnreadable',
          message: `the cluster's Node list cannot be read: no reboots or deletions this round${n ? ` (${n} errored instance(s) wait)` : ''}`,
        },
      ],
      memory,
    };
  }
  const map = mapInstancesToNodes(instances, nodes);
  const registered = new Set(memory.registered.filter((id) => instances.some((i) => i.id === id)));
  const findings: FlightFinding[] = [];
  const hasNode = new Set<string>();
  const protectedBy = new Map<string, ClusterNode>();
  for (const i of instances) {
    const stale = map.nodeOf.has(i.id) ? undefined : staleProviderNode(i, nodes, knownIds);
    if (stale) {
      findings.push({
        repair: 'unregistered-instances',
        reason: 'StaleProviderID',
        message: `Node ${stale.name} has providerID of server ${stale.instanceId}, which no longer exists; instance ${i.name} (${i.id}) carries its name and address and counts as registered`,
        node: stale.name,
      });
    }
    if (map.nodeOf.has(i.id) || stale) hasNode.add(i.id);
    if (hasNode.has(i.id) || i.metadata[REGISTERED_METADATA_KEY]) registered.add(i.id);
    const guard = protectingNode(i, nodes);
    if (guard) protectedBy.set(i.id, guard);
  }
  const next: FlightMemory = { ...memory, softRebootAtMs: {}, hardRebootAtMs: {}, registered: [...registered] };
  const deletions: FlightAction[] = [];
  for (const i of instances.filter(isErroring)) {
    const guard = protectedBy.get(i.id);
    if (guard) {
      findings.push({
        repair: 'errored-instances',
        reason: 'ErroredInstanceNodeReady',
        message: `instance ${i.name} is in vm_state error but Node ${guard.name} is registered and not NotReady: it is not deleted`,
        node: guard.name,
      });
      continue;
    }
    deletions.push({ kind: 'delete-instance', instanceId: i.id, instanceName: i.name, why: 'errored' });
  }
  const actions: FlightAction[] = [];
  for (const i of instances) {
    if (registered.has(i.id) || isErroring(i) || (isStopping(i) && !isStarting(i)) || i.taskState === 'deleting') continue;
    if (hasNode.has(i.id) || protectedBy.has(i.id)) continue;
    const step = nextStep(i, nowMs, memory, o);
    const soft = memory.softRebootAtMs[i.id];
    const hard = memory.hardRebootAtMs[i.id];
    if (soft !== undefined) next.softRebootAtMs[i.id] = soft;
    if (hard !== undefined) next.hardRebootAtMs[i.id] = hard;
    if (step.kind === 'reboot') {
      actions.push({ kind: 'reboot', instanceId: i.id, instanceName: i.name, type: step.type, ageMs: nowMs - i.createdMs });
      // Recorded as decided; the executor drops the record again when the reboot call fails.
      if (step.type === 'SOFT') next.softRebootAtMs[i.id] = nowMs;
      else next.hardRebootAtMs[i.id] = nowMs;
    } else if (step.kind === 'delete') {
      deletions.push({ kind: 'delete-instance', instanceId: i.id, instanceName: i.name, why: 'unregistered' });
    }
  }
  actions.push(...deletions);
  for (const i of instances) {
    if (registered.has(i.id) && !hasNode.has(i.id) && !protectedBy.has(i.id) && !isErroring(i)) {
      findings.push({ repair: 'unregistered-instances', reason: 'NodeGone', message: `instance ${i.name} had a Node that was deleted; left alone` });
    }
  }
  return { actions, findings, memory: next };
}
