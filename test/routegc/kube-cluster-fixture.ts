// The customer cluster of routegc and flight scenarios as a real kube-apiserver: Nodes made from a
// short description (status addresses, podCIDR, providerID), their events and conditions read back,
// an event emitter that records on those Nodes, and OpenStack clients that record the calls made.
import { parse } from 'yaml';
import { systemClock } from '../../src/base/clock.ts';
import type { Logger } from '../../src/base/logger.ts';
import { EventRecorder } from '../../src/clients/kube/event-recorder.ts';
import type { KubeApi } from '../../src/clients/kube/kube-api.ts';
import type { Condition, Node } from '../../src/clients/kube/kube-types.ts';
import type { OpenStackClient } from '../../src/clients/openstack/openstack-client.ts';
import type { ClusterNodes } from '../../src/controllers/managed-cluster/cluster-adapters.ts';
import { eventEmitter, type ClusterEvent, type EmitEvent } from '../../src/controllers/managed-cluster/cluster-events.ts';

export interface NodeSpec {
  name: string;
  ip: string;
  podCIDR?: string;
  instanceId?: string;
}

/** Replaces every Node of the cluster with these (status written through the status subresource). */
export async function setNodes(api: KubeApi, nodes: NodeSpec[]): Promise<void> {
  for (const n of (await api.nodes.list()).items) await api.nodes.delete(undefined, n.metadata.name);
  for (const n of nodes) {
    const spec = { podCIDR: n.podCIDR, podCIDRs: n.podCIDR ? [n.podCIDR] : undefined, providerID: n.instanceId ? `openstack:///${n.instanceId}` : undefined };
    const created = await api.nodes.create({ metadata: { name: n.name }, spec } as Node);
    await api.nodes.replaceStatus({
      ...created,
      status: {
        addresses: [
          { type: 'InternalIP', address: n.ip },
          { type: 'Hostname', address: n.name },
        ],
      },
    });
  }
}

export async function nodeEvents(api: KubeApi, node: string): Promise<{ type?: string; reason?: string; message?: string }[]> {
  return (await api.events.list()).items.filter((e) => e.involvedObject.kind === 'Node' && e.involvedObject.name === node);
}

export async function nodeCondition(api: KubeApi, node: string, type: string): Promise<Condition | undefined> {
  return (await api.nodes.get(undefined, node)).status?.conditions?.find((c) => c.type === type);
}

/** Emits as the standalone commands do (Node events on the real cluster) and keeps every event in `events`. */
export function recordingEmitter(api: KubeApi, log: Logger): { emit: EmitEvent; events: ClusterEvent[] } {
  const events: ClusterEvent[] = [];
  const inner = eventEmitter(log, { nodes: new EventRecorder({ events: api.events, component: 'kubeward-test', clock: systemClock, log }) });
  return { events, emit: async (e) => void (events.push(e), await inner(e)) };
}

/** Counts list() calls, for "no Kubernetes call" checks. */
export function countingNodes(inner: ClusterNodes): ClusterNodes & { lists: number } {
  const out = {
    lists: 0,
    list: (signal?: AbortSignal) => (out.lists++, inner.list(signal)),
    setCondition: inner.setCondition.bind(inner),
  };
  return out;
}

/** The same client, recording "service.method" (and its arguments in `log`) for every typed call, on any target. */
export function recordCalls<T extends OpenStackClient>(os: T): { client: T; calls: string[]; log: { call: string; args: unknown[] }[] } {
  const calls: string[] = [];
  const log: { call: string; args: unknown[] }[] = [];
  const wrap = (svc: string, api: object) =>
    new Proxy(api, {
      get: (target, prop) => {
        const v = Reflect.get(target, prop) as unknown;
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          calls.push(`${svc}.${String(prop)}`);
          log.push({ call: `${svc}.${String(prop)}`, args });
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  const client = new Proxy(os, {
    get: (target, prop) => {
      const v = Reflect.get(target, prop) as unknown;
      return ['keystone', 'nova', 'neutron', 'cinder', 'octavia'].includes(String(prop)) ? wrap(String(prop), v as object) : v;
    },
  });
  return { client, calls, log };
}

/** Server, CA and token of a kubeconfig the test server wrote (for the fault proxy). */
export function kubeconfigParts(text: string): { server: string; ca: string; token: string } {
  const doc = parse(text) as { clusters: { cluster: { server: string; 'certificate-authority-data': string } }[]; users: { user: { token: string } }[] };
  return {
    server: doc.clusters[0]!.cluster.server,
    ca: Buffer.from(doc.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString('utf8'),
    token: doc.users[0]!.user.token,
  };
}
