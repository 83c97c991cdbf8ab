// The ManagedCluster custom resource (kubeward.io/v1alpha1, namespaced): one customer cluster on
// OpenStack, with references to its kubeconfig and cloud credentials in Secrets of its namespace.
import type { Condition, KubeObject } from '../../clients/kube/kube-types.ts';
import type { ClusterIdentity, DeorbitPolicy } from '../deorbit/deorbit-types.ts';

export type DeletionPolicy = 'Delete' | 'Orphan';

export type ClusterPhase = 'Pending' | 'Creating' | 'Running' | 'Upgrading' | 'Terminating';

export interface SecretKeyRef {
  name: string;
  /** Key inside the Secret; each reference documents its default. */
  key?: string;
}

export interface ManagedClusterSpec {
  /** Secret with the cluster's kubeconfig (key default "kubeconfig"). */
  kubeconfigSecretRef: SecretKeyRef;
  /** Secret with a clouds.yaml (key default "clouds.yaml") and the cloud entry to use. */
  cloudCredentialsSecretRef: SecretKeyRef & { cloud: string };
  /** Kubernetes version of the cluster ("1.30.2"); below 1.17 the LB Service wait is time-based. */
  version?: string;
  clusterCIDR?: string;
  /** Accept a clusterCIDR far wider than the Nodes' pod CIDRs (cidr-scope.ts MAX_CIDR_SLACK_BITS). */
  forceClusterCIDR?: boolean;
  openstack?: {
    routerID?: string;
    securityGroupName?: string;
    /** The OCCM --cluster-name that names its load balancers (default "kubernetes"). */
    loadBalancerClusterName?: string;
  };
  nodePools?: { name: string; size?: number }[];
  /** While true, deletion waits and nothing is cleaned up. */
  terminationProtection?: boolean;
  /**
   * What deleting this ManagedCluster does to the cluster behind it. Delete: deorbit (delete its
   * LoadBalancer Services, Cinder claims and snapshots, wait for Octavia and Cinder). Orphan (the
   * default, and what a cluster registered by hand gets): remove the finalizer, touch nothing.
   * A cluster whose status.phase is Terminating (its lifecycle is ending it) is deorbited either way.
   */
  deletionPolicy?: DeletionPolicy;
  /** A cluster without cloud resources: nothing to clean up in OpenStack. */
  noCloud?: boolean;
  /** What deorbit may do beyond its default (which keeps backups and objects labelled kubeward.io/deorbit=keep). */
  deorbit?: DeorbitPolicy;
}

/** status.deorbit: DeorbitProgress with times as RFC 3339, plus a one-line summary for kubectl. */
export interface DeorbitStatus {
  step: string;
  attempt: number;
  attemptStartedAt?: string;
  apiFailingSince?: string;
  lastError?: string;
  remaining: { snapshots: number; pvcs: number; services: number; volumes: number; loadBalancers: number };
  retainedVolumes: string[];
  trackedLoadBalancers: string[];
  seenServices?: { namespace: string; name: string; uid?: string }[];
  heldReason?: string;
  leftovers: { volumes: string[]; loadBalancers: string[]; floatingIps: string[] };
  selfDestructReason?: string;
  finishedAt?: string;
  summary: string;
  /** The first attempt: every deorbit timer counts from here. */
  startedAt?: string;
  /** Cinder volume IDs recorded before their claims were deleted (waited on until Cinder answers 404). */
  trackedVolumes?: string[];
  cloudRetries?: { id: string; kind: 'volume' | 'loadbalancer'; count: number; lastAt: string }[];
  /** Kept objects ("Kind namespace/name"): backups, and what is labelled kubeward.io/deorbit=keep. */
  kept?: string[];
  deletedServices?: { namespace: string; name: string; uid?: string }[];
  claimsInUse?: string[];
  failedDeletes?: string[];
  createdDuring?: string[];
}

export interface ManagedClusterStatus {
  phase?: ClusterPhase;
  conditions?: Condition[];
  deorbit?: DeorbitStatus;
  /** What the kubeconfig reached when the cluster was adopted; deorbit refuses any other. */
  clusterIdentity?: ClusterIdentity & { recordedAt?: string };
}

export interface ManagedCluster extends KubeObject {
  spec: ManagedClusterSpec;
  status?: ManagedClusterStatus;
}

export const DEORBIT_FINALIZER = 'kubeward.io/deorbit';
export const DEORBIT_CONDITION = 'DeorbitComplete';
