// What the controllers know about one cluster: its instances and Nodes, mapped to each other by
// providerID first and (unique) name second, and the next hops that belong to them (pure).
// Which instances are provably the cluster's is cluster-identity.ts's call.
import { ipKey as normalizeIp } from '../../base/ip.ts';

/** A Nova server as the controllers see it; addresses include floating IPs. */
export interface ClusterInstance {
  id: string;
  /** Empty for a server Nova lists from a down cell (status UNKNOWN). */
  name: string;
  /** Nova's status; UNKNOWN for a server in a down cell (microversion >= 2.69). */
  status?: string;
  addresses: string[];
  createdMs: number;
  vmState?: string;
  taskState?: string | null;
  powerState?: number;
  securityGroups: string[];
  tags: string[];
  metadata: Record<string, string>;
}

/** A Kubernetes Node as the controllers see it. */
export interface ClusterNode {
  name: string;
  /** The Nova instance UUID from spec.providerID, when the cloud provider set one. */
  instanceId?: string;
  /** InternalIP and ExternalIP addresses. */
  addresses: string[];
  /** spec.podCIDRs, or spec.podCIDR when only that is set. */
  podCidrs: string[];
  uid?: string;
  /** NetworkUnavailable is True, or the node carries the kubeward.io/pod-network-broken annotation. */
  podNetworkBroken?: boolean;
  /** The Ready condition: true when True, false when False or Unknown, undefined when the Node has none yet. */
  ready?: boolean;
}

/**
 * The instance UUID in a providerID: "openstack:///<uuid>" (OCCM) or "openstack://<region>/<uuid>"
 * (older in-tree provider). Other providers' IDs give undefined.
 */
export function instanceIdOf(providerId: string | undefined): string | undefined {
  const m = /^openstack:\/\/[^/]*\/([^/]+)$/.exec(providerId ?? '');
  return m ? m[1] : undefined;
}

export interface InstanceNodeMap {
  nodeOf: Map<string, ClusterNode>;
  instanceOf: Map<string, ClusterInstance>;
}

/** Pairs instances and Nodes: a Node with a providerID pairs only by it; the rest pair by equal name. */
export function mapInstancesToNodes(instances: readonly ClusterInstance[], nodes: readonly ClusterNode[]): InstanceNodeMap {
  const nodeOf = new Map<string, ClusterNode>();
  const instanceOf = new Map<string, ClusterInstance>();
  const byId = new Map(instances.map((i) => [i.id, i]));
  for (const n of nodes) {
    const inst = n.instanceId !== undefined ? byId.get(n.instanceId) : undefined;
    if (inst && !nodeOf.has(inst.id)) {
      nodeOf.set(inst.id, n);
      instanceOf.set(n.name, inst);
    }
  }
  // A Node whose providerID names another server must not borrow a same-named instance: the name
  // fallback is for Nodes without a usable providerID only, and only for a name one instance carries.
  const named = new Map<string, ClusterInstance[]>();
  for (const i of instances) named.set(i.name, [...(named.get(i.name) ?? []), i]);
  const byName = new Map([...named].filter(([name, list]) => name !== '' && list.length === 1).map(([name, list]) => [name, list[0]!]));
  for (const n of nodes) {
    if (n.instanceId !== undefined || instanceOf.has(n.name)) continue;
    const inst = byName.get(n.name);
    if (inst && !nodeOf.has(inst.id)) {
      nodeOf.set(inst.id, n);
      instanceOf.set(n.name, inst);
    }
  }
  return { nodeOf, instanceOf };
}

/** Next hops that belong to the cluster: its instances' addresses, and addresses of Nodes whose instance still exists. */
export function validNextHops(instances: readonly ClusterInstance[], nodes: readonly ClusterNode[]): Set<string> {
  const hops = new Set<string>();
  const ids = new Set(instances.map((i) => i.id));
  for (const i of instances) for (const a of i.addresses) hops.add(normalizeIp(a));
  for (const n of nodes) {
    // A Node whose providerID names a server that is gone is stale: its address may be reused.
    if (n.instanceId !== undefined && !ids.has(n.instanceId)) continue;
    for (const a of n.addresses) hops.add(normalizeIp(a));
  }
  return hops;
}

/** The next hops that reach one Node: its own addresses and its instance's. */
export function hopsOfNode(node: ClusterNode, map: InstanceNodeMap): Set<string> {
  const inst = map.instanceOf.get(node.name);
  return new Set([...node.addresses, ...(inst?.addresses ?? [])].map(normalizeIp));
}

/** A route's identity: destination and next hop, the address compared by value. */
export const routeKey = (r: { destination: string; nexthop: string }): string => `${r.destination}>${normalizeIp(r.nexthop)}`;
