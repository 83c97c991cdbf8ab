// Repairs 1 and 2 (pure): the pod-CIDR rules in the cluster's security group, the group on every
// running instance, and the optional forced resync for Nodes whose pod traffic is broken.
import type { SecurityGroup } from '../../clients/openstack/openstack-types.ts';
import { parseCidr, sameCidrText } from '../../base/ip.ts';
import { cidrSlackProblem } from '../managed-cluster/cidr-scope.ts';
import type { ClusterInstance, ClusterNode } from '../managed-cluster/cluster-view.ts';
import type { FlightAction, FlightFinding } from './flight-types.ts';
import { isRunning } from './instance-state.ts';

const PROTOCOLS = ['udp', 'tcp', 'icmp'] as const;

/** The one group with the cluster's name, or the finding that explains why there is none to use. */
export function pickGroup(groups: SecurityGroup[] | undefined, name: string): { group?: SecurityGroup; finding?: FlightFinding } {
  const repair = 'security-group-rules';
  if (groups === undefined) return {};
  if (groups.length === 0) return { finding: { repair, reason: 'SecurityGroupMissing', message: `no security group named ${name}` } };
  if (groups.length > 1)
    return {
      finding: {
        repair,
        reason: 'SecurityGroupAmbiguous',
        message: `${groups.length} security groups named ${name} (${groups.map((g) => g.id).join(', ')}); rename or delete the extra ones`,
      },
    };
  return { group: groups[0] };
}

/**
 * Ingress rules from the cluster CIDR for udp, tcp and icmp (all ports); a rule for any protocol covers
 * all three. Only when the Nodes could be read and the CIDR is not far wider than their pod CIDRs
 * (cidr-scope.ts cidrSlackProblem; `force` accepts it): a rule from a /8 would let in every cluster
 * of the address space.
 */
export function decideGroupRules(
  group: SecurityGroup,
  clusterCidr: string,
  pods: { nodes: readonly ClusterNode[] | undefined; force?: boolean },
): { actions: FlightAction[]; finding?: FlightFinding } {
  const cidr = parseCidr(clusterCidr);
  if (!cidr)
    return {
      actions: [],
      finding: { repair: 'security-group-rules', reason: 'ClusterCIDRInvalid', message: `cluster CIDR ${JSON.stringify(clusterCidr)} is not a CIDR` },
    };
  // Whatever the scope rules upstream allow, a rule flight creates never opens the group to the world.
  if (cidr.prefix === 0)
    return {
      actions: [],
      finding: {
        repair: 'security-group-rules',
        reason: 'ClusterCIDRInvalid',
        message: `a rule from ${clusterCidr} would open the group to every address; not created`,
      },
    };
  if (pods.nodes === undefined) return { actions: [] };
  const slack = cidrSlackProblem(cidr, pods.nodes, { forceClusterCidr: pods.force });
  if (slack) return { actions: [], finding: { repair: 'security-group-rules', reason: 'ClusterCIDRTooWide', message: `no rule created: ${slack}` } };
  const ethertype = cidr.family === 4 ? 'IPv4' : 'IPv6';
  const fromCluster = group.security_group_rules.filter(
    (r) =>
      r.direction === 'ingress' &&
      r.ethertype === ethertype &&
      r.remote_ip_prefix !== null &&
      sameCidrText(r.remote_ip_prefix, clusterCidr) &&
      r.port_range_min === null &&
      r.port_range_max === null,
  );
  if (fromCluster.some((r) => r.protocol === null || r.protocol === 'any')) return { actions: [] };
  const have = new Set(fromCluster.map((r) => protocolName(r.protocol)));
  const actions: FlightAction[] = PROTOCOLS.filter((p) => !have.has(p)).map((protocol) => ({
    kind: 'create-rule',
    groupId: group.id,
    protocol,
    ethertype,
    remoteCidr: clusterCidr,
  }));
  return { actions };
}

/** Neutron accepts numbers and names; ipv6-icmp and 58 count as icmp for an IPv6 cluster. */
function protocolName(p: string | null): string {
  const byNumber: Record<string, string> = { '6': 'tcp', '17': 'udp', '1': 'icmp', '58': 'icmp', 'ipv6-icmp': 'icmp', icmpv6: 'icmp' };
  return p === null ? 'any' : (byNumber[p] ?? p);
}

/** Running instances lacking the group get it; starting and stopping ones wait until they run. */
export function decideGroupAssignment(instances: readonly ClusterInstance[], groupName: string): FlightAction[] {
  return instances
    .filter((i) => isRunning(i) && !i.securityGroups.includes(groupName))
    .map((i) => ({ kind: 'add-security-group', instanceId: i.id, instanceName: i.name, group: groupName }));
}

/** One harmless rule change per round makes the agents reconcile the group, when some Node's pod traffic is broken. */
export function decideGroupResync(group: SecurityGroup, nodes: readonly ClusterNode[] | undefined, enabled: boolean): FlightAction[] {
  const broken = (nodes ?? []).filter((n) => n.podNetworkBroken).map((n) => n.name);
  if (!enabled || broken.length === 0) return [];
  return [{ kind: 'resync-security-group', groupId: group.id, nodes: broken }];
}
