// Repairs 5 and 6 (pure): the service user's roles on the project, and the tags and metadata that
// tell operators (and kubeward after a restart) which cluster, pool and Node an instance belongs to.
import { OWNER_METADATA_KEY, OWNER_REF_METADATA_KEY, ownerTag } from '../managed-cluster/cluster-identity.ts';
import { mapInstancesToNodes, type ClusterInstance, type ClusterNode } from '../managed-cluster/cluster-view.ts';
import { REGISTERED_METADATA_KEY, type FlightAction, type FlightOptions } from './flight-types.ts';
import { isRunning } from './instance-state.ts';

export function decideRoles(have: readonly string[] | undefined, wanted: readonly string[]): FlightAction[] {
  if (have === undefined) return [];
  const held = new Set(have.map((r) => r.toLowerCase()));
  return wanted.filter((w) => !held.has(w.toLowerCase())).map((role) => ({ kind: 'assign-role', role }));
}

/** The pool an instance belongs to, by the longest matching name prefix. */
export function poolOf(name: string, pools: FlightOptions['pools']): string | undefined {
  const hits = pools.filter((p) => p.prefix !== '' && name.startsWith(p.prefix)).sort((a, b) => b.prefix.length - a.prefix.length);
  return hits[0]?.name;
}

/**
 * The labels of a proven instance: the cluster's name and pool for people, and the owner metadata
 * and tag (the cluster's UID) that prove ownership to kubeward later, even after a rename or restart.
 */
export function wantedLabels(
  inst: ClusterInstance,
  o: Pick<FlightOptions, 'clusterName' | 'pools' | 'ownerId' | 'ownerRef'>,
  node: ClusterNode | undefined,
): { tags: string[]; metadata: Record<string, string> } {
  const pool = poolOf(inst.name, o.pools);
  const owner = o.ownerId;
  const tags = ['kubeward', `kubeward:cluster=${o.clusterName}`, ...(pool ? [`kubeward:nodepool=${pool}`] : []), ...(owner ? [ownerTag(owner)] : [])];
  const metadata: Record<string, string> = {
    // The provisioner's own word stays: Kubernikus's `provisioner=kubernikus` is part of its owner claim.
    provisioner: inst.metadata.provisioner ?? 'kubeward',
    'kubeward:cluster': o.clusterName,
    ...(pool ? { 'kubeward:nodepool': pool } : {}),
    ...(owner ? { [OWNER_METADATA_KEY]: owner } : {}),
    ...(owner && o.ownerRef ? { [OWNER_REF_METADATA_KEY]: o.ownerRef } : {}),
  };
  if (node) metadata[REGISTERED_METADATA_KEY] = node.name;
  return { tags, metadata };
}

/** One tag call per instance with the missing tags and one metadata merge with only the differing keys. */
export function decideLabels(
  instances: readonly ClusterInstance[],
  nodes: readonly ClusterNode[] | undefined,
  o: Pick<FlightOptions, 'clusterName' | 'pools' | 'ownerId' | 'ownerRef'>,
): FlightAction[] {
  const map = mapInstancesToNodes(instances, nodes ?? []);
  const actions: FlightAction[] = [];
  for (const i of instances.filter(isRunning)) {
    const want = wantedLabels(i, o, map.nodeOf.get(i.id));
    const tags = want.tags.filter((t) => !i.tags.includes(t));
    if (tags.length) actions.push({ kind: 'add-tags', instanceId: i.id, instanceName: i.name, tags });
    const metadata = Object.fromEntries(Object.entries(want.metadata).filter(([k, v]) => i.metadata[k] !== v));
    if (Object.keys(metadata).length) actions.push({ kind: 'merge-metadata', instanceId: i.id, instanceName: i.name, metadata });
  }
  return actions;
}
