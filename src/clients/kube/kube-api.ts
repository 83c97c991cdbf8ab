// One API server's typed resource clients, built from a KubeConfig: what the controllers are given.
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type KubeClientOptions } from './kube-client.ts';
import type {
  KubeEvent,
  KubeObject,
  Lease,
  NamespaceObject,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Secret,
  Service,
  VolumeSnapshot,
} from './kube-types.ts';
import { ResourceClient, type ResourceKind } from './resource-client.ts';
import { KINDS, volumeSnapshotKind } from './resource-kinds.ts';

export interface KubeApi {
  client: KubeClient;
  pvcs: ResourceClient<PersistentVolumeClaim>;
  pvs: ResourceClient<PersistentVolume>;
  services: ResourceClient<Service>;
  nodes: ResourceClient<Node>;
  secrets: ResourceClient<Secret>;
  events: ResourceClient<KubeEvent>;
  leases: ResourceClient<Lease>;
  namespaces: ResourceClient<NamespaceObject>;
  volumeSnapshots(version: string): ResourceClient<VolumeSnapshot>;
  /** A client for any other kind (the ManagedCluster CR, for example). */
  resource<T extends KubeObject>(kind: ResourceKind): ResourceClient<T>;
}

export function createKubeApi(kc: KubeConfig, opts: KubeClientOptions = {}): KubeApi {
  const client = new KubeClient(kc, opts);
  const r = <T extends KubeObject>(kind: ResourceKind): ResourceClient<T> => new ResourceClient<T>(client, kind);
  return {
    client,
    pvcs: r(KINDS.persistentVolumeClaim),
    pvs: r(KINDS.persistentVolume),
    services: r(KINDS.service),
    nodes: r(KINDS.node),
    secrets: r(KINDS.secret),
    events: r(KINDS.event),
    leases: r(KINDS.lease),
    namespaces: r(KINDS.namespace),
    volumeSnapshots: (version) => r(volumeSnapshotKind(version)),
    resource: r,
  };
}
