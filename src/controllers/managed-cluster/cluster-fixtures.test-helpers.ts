// Builders for routegc and flight unit tests: instances and Nodes with only the fields a case needs.
import type { ClusterInstance, ClusterNode } from './cluster-view.ts';

export function inst(id: string, addresses: string[], extra: Partial<ClusterInstance> = {}): ClusterInstance {
  return { id, name: id, addresses, createdMs: 0, vmState: 'active', taskState: null, powerState: 1, securityGroups: [], tags: [], metadata: {}, ...extra };
}

export function node(name: string, addresses: string[], podCidrs: string[] = [], instanceId?: string): ClusterNode {
  return { name, addresses, podCidrs, instanceId };
}

export const r = (destination: string, nexthop: string) => ({ destination, nexthop });
