// The Kubernetes objects kubeward reads and writes, as the API returns them (the fields we use only).

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  generateName?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** A watch stream line: https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes */
export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** metav1.Status, the body of every API error. */
export interface KubeStatus {
  kind: 'Status';
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; kind?: string; causes?: { message?: string; field?: string }[] };
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface PersistentVolumeClaim extends KubeObject {
  spec: { volumeName?: string; storageClassName?: string };
  status?: { phase?: 'Pending' | 'Bound' | 'Lost' };
}

export interface PersistentVolume extends KubeObject {
  spec: {
    persistentVolumeReclaimPolicy?: 'Retain' | 'Delete' | 'Recycle';
    claimRef?: { namespace?: string; name?: string; uid?: string };
    cinder?: { volumeID: string };
    csi?: { driver: string; volumeHandle: string };
    nfs?: { server: string; path: string };
    storageClassName?: string;
  };
  status?: { phase?: 'Pending' | 'Available' | 'Bound' | 'Released' | 'Failed' };
}

export interface Service extends KubeObject {
  spec: { type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName'; loadBalancerIP?: string };
  status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } };
}

export interface VolumeSnapshot extends KubeObject {
  spec?: { source?: { persistentVolumeClaimName?: string }; volumeSnapshotClassName?: string };
}

export interface Node extends KubeObject {
  spec: { podCIDR?: string; podCIDRs?: string[]; providerID?: string; unschedulable?: boolean };
  status?: { addresses?: { type: string; address: string }[]; conditions?: Condition[] };
}

export interface Secret extends KubeObject {
  type?: string;
  /** Base64 values, as the API returns them. */
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export interface KubeEvent extends KubeObject {
  involvedObject: { apiVersion?: string; kind?: string; name?: string; namespace?: string; uid?: string; resourceVersion?: string };
  reason: string;
  message: string;
  type: 'Normal' | 'Warning';
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  source?: { component?: string; host?: string };
  reportingComponent?: string;
  reportingInstance?: string;
}

/** coordination.k8s.io/v1 Lease. Times are RFC 3339 with microseconds (MicroTime). */
export interface Lease extends KubeObject {
  spec: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number | null;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number | null;
  };
}

export interface NamespaceObject extends KubeObject {
  status?: { phase?: string };
}
