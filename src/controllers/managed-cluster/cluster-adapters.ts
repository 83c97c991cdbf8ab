// Adapters from kubeward's OpenStack and Kubernetes clients to the cluster view every controller
// decides on: Nova servers as ClusterInstance, Nodes as ClusterNode, Node conditions written back.
import type { KubeApi } from '../../clients/kube/kube-api.ts';
import type { Condition, Node } from '../../clients/kube/kube-types.ts';
import type { Server } from '../../clients/openstack/openstack-types.ts';
import { nextCondition } from './cluster-conditions.ts';
import { instanceIdOf, type ClusterInstance, type ClusterNode } from './cluster-view.ts';

export const POD_NETWORK_BROKEN_ANNOTATION = 'kubeward.io/pod-network-broken';

export function toClusterInstance(s: Server): ClusterInstance {
  return {
    id: s.id,
    // A server of a down cell (status UNKNOWN, microversion 2.69) comes with id, status, tenant and
    // created only: it is present, but nothing else about it is known.
    name: s.name ?? '',
    status: s.status,
    addresses: Object.values(s.addresses ?? {}).flatMap((list) => list.map((a) => a.addr)),
    createdMs: Date.parse(s.created),
    vmState: s['OS-EXT-STS:vm_state'],
    taskState: s['OS-EXT-STS:task_state'] ?? null,
    powerState: s['OS-EXT-STS:power_state'],
    securityGroups: [...new Set((s.security_groups ?? []).map((g) => g.name))],
    tags: s.tags ?? [],
    metadata: s.metadata ?? {},
  };
}

export function toClusterNode(n: Node): ClusterNode {
  const addrs = n.status?.addresses ?? [];
  // InternalIP first: it is the next hop the cloud route controller uses.
  const pick = (type: string) => addrs.filter((a) => a.type === type).map((a) => a.address);
  const netDown = n.status?.conditions?.some((c) => c.type === 'NetworkUnavailable' && c.status === 'True') ?? false;
  const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
  return {
    name: n.metadata.name,
    uid: n.metadata.uid,
    instanceId: instanceIdOf(n.spec?.providerID),
    addresses: [...pick('InternalIP'), ...pick('ExternalIP')],
    podCidrs: n.spec?.podCIDRs?.length ? n.spec.podCIDRs : n.spec?.podCIDR ? [n.spec.podCIDR] : [],
    podNetworkBroken: netDown || n.metadata.annotations?.[POD_NETWORK_BROKEN_ANNOTATION] !== undefined,
    ready: ready === undefined ? undefined : ready.status === 'True',
  };
}

/** The cluster's Nodes, as one list call (throws when the API cannot be read). */
export interface ClusterNodes {
  list(signal?: AbortSignal): Promise<ClusterNode[]>;
  /** Sets one condition in the Node's status when type, status, reason or message differ; an aborted signal writes nothing. */
  setCondition(node: string, condition: Omit<Condition, 'lastTransitionTime'>, nowMs: number, signal?: AbortSignal): Promise<boolean>;
}

export function kubeClusterNodes(api: KubeApi): ClusterNodes {
  return {
    list: async (signal) => (await api.nodes.list(undefined, {}, { signal })).items.map(toClusterNode),
    setCondition: async (name, c, nowMs, signal) => {
      const node = await api.nodes.get(undefined, name, { signal });
      const old = node.status?.conditions?.find((x) => x.type === c.type);
      // A condition that was never True is not worth writing as False.
      if (!old && c.status === 'False') return false;
      const next = nextCondition(old, c, nowMs);
      if (!next) return false;
      signal?.throwIfAborted();
      // Strategic merge keys conditions by type: the others on the Node stay as they are.
      await api.nodes.patch(undefined, name, { status: { conditions: [next] } }, 'strategic', 'status', { signal });
      return true;
    },
  };
}
