// The vocabulary of deorbit: settings, what one observation holds, the progress kept between
// passes (status of the ManagedCluster, or memory in one-shot mode), and the decision of a pass.
import type { KubeObject, PersistentVolume, PersistentVolumeClaim, Service, VolumeSnapshot } from '../../clients/kube/kube-types.ts';
import type { ManagedClusterEvent } from '../managed-cluster/cluster-events.ts';

/** A Service as deorbit remembers it across passes (the Service itself is gone once deleted). */
export interface SeenService {
  namespace: string;
  name: string;
  uid?: string;
}

export type DeorbitRefusal = RefusalReason | StopReason | 'DeletionPolicyOrphan';

/** The port deorbit counts through (deorbit-metrics.ts has the one on the metrics registry). */
export interface DeorbitMetrics {
  /** A pass (or a deleted cluster) where deorbit refused to act or to judge, by reason. */
  refused(reason: DeorbitRefusal): void;
  /** Deletions the blast-radius budget moved to a later pass. */
  heldBack(count: number): void;
}

export interface DeorbitSettings {
  /** Time between looks while waiting (15 s). */
  pollIntervalMs: number;
  /** One attempt waits at most this long, then ends with a Failed… event and starts over (10 min). */
  attemptTimeoutMs: number;
  /** Since deletion: give up, record the debris and let the cluster go (24 h). */
  hangTimeoutMs: number;
  /** The cluster's API unreachable for this long without a single success: give up (2 min). */
  apiUnavailableTimeoutMs: number;
  /** Clusters older than 1.17 (no Service finalizer): LB Services count as gone this long after deletion (5 min). */
  legacyServiceGraceMs: number;
  /** CSI drivers whose volumes (and VolumeSnapshotClasses) are Cinder's. */
  csiDrivers: readonly string[];
  /** Blast-radius budget: at most this many deletions per pass; the rest wait for the next pass (5). */
  maxDeletesPerPass: number;
  /**
   * A recorded Cinder volume in error_deleting (or left behind by its CSI driver) or a recorded
   * load balancer in ERROR is deleted again at most this many times, one poll apart; then it is
   * reported by ID and no longer waited for (DEFAULT_CLOUD_RETRIES when absent).
   */
  maxCloudRetries?: number;
  /** Where refusals and held-back deletions are counted; none when absent. */
  metrics?: DeorbitMetrics;
  /**
   * Operator dry run: decide as the real controller would and report it (event DeorbitDryRun,
   * condition reason DryRun); delete nothing, add or remove no finalizer, keep no progress.
   */
  dryRun?: boolean;
}

export const DEFAULT_DEORBIT_SETTINGS: DeorbitSettings = {
  pollIntervalMs: 15_000,
  attemptTimeoutMs: 600_000,
  hangTimeoutMs: 86_400_000,
  apiUnavailableTimeoutMs: 120_000,
  legacyServiceGraceMs: 300_000,
  csiDrivers: ['cinder.csi.openstack.org'],
  maxDeletesPerPass: 5,
  maxCloudRetries: 3,
};

export const DEFAULT_CLOUD_RETRIES = 3;

/** The cluster being deorbited, as its owner (ManagedCluster or command line) describes it. */
export interface DeorbitTarget {
  /** When deletion started (deletionTimestamp, or the start of the one-shot command). */
  deletionStartedMs: number;
  /** Kubernetes version of the cluster, like "1.30.2"; undefined when unknown (treated as current). */
  version?: string;
  /** OCCM's --cluster-name: its load balancers are named kube_service_<name>_<namespace>_<service>. */
  loadBalancerClusterName: string;
  /** What the owner lets deorbit do beyond the default (spec.deorbit of the ManagedCluster). */
  policy?: DeorbitPolicy;
}

/** How a claim that pods still mount is handled: delete those pods and their controllers, or only report them. */
export type InUseClaims = 'DeleteWorkloads' | 'Report';

export interface DeorbitPolicy {
  /** Delete snapshots of backup classes (parameters.type: backup) too; default false: they are kept. */
  deleteBackups?: boolean;
  /** Delete objects labelled kubeward.io/deorbit=keep too; default false: they are kept. */
  deleteKept?: boolean;
  /** Default DeleteWorkloads. */
  inUseClaims?: InUseClaims;
}

/**
 * What a kubeconfig reaches, recorded when the cluster is adopted and checked on every pass: the
 * kube-system namespace's UID (made once per cluster, never reused) and the SHA-256 fingerprint of
 * the CA the kubeconfig trusts for the apiserver ("none" when it names none).
 */
export interface ClusterIdentity {
  kubeSystemUid: string;
  caFingerprint: string;
}

export interface CloudVolume {
  id: string;
  status: string;
}

export interface CloudLoadBalancer {
  id: string;
  name: string;
  provisioningStatus: string;
  vipPortId?: string;
  /** Epoch ms; undefined when Octavia did not say. */
  createdMs?: number;
}

export interface CloudFloatingIp {
  id: string;
  portId: string | null;
}

/** A VolumeSnapshotClass: which CSI driver takes snapshots of this class, and its parameters. */
export interface SnapshotClass {
  name: string;
  driver: string;
  /** cinder-csi's `type: backup` makes Cinder backups, meant to outlive the volume. */
  parameters?: Record<string, string>;
}

/** A pod as deorbit needs it: which claims it mounts and who controls it. */
export interface PodView extends KubeObject {
  metadata: KubeObject['metadata'] & { ownerReferences?: OwnerReference[] };
  spec?: { volumes?: { persistentVolumeClaim?: { claimName: string } }[]; nodeName?: string };
  status?: { phase?: string };
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

/** A workload object (ReplicaSet, Deployment, StatefulSet...) with its own controller reference. */
export interface WorkloadView extends KubeObject {
  metadata: KubeObject['metadata'] & { ownerReferences?: OwnerReference[] };
}

export interface SatelliteView {
  /** undefined: the VolumeSnapshot API does not exist in the cluster (nothing to delete). */
  snapshots: VolumeSnapshot[] | undefined;
  /** undefined: no VolumeSnapshotClass API; then no snapshot is proven to be Cinder's. */
  snapshotClasses: SnapshotClass[] | undefined;
  pvcs: PersistentVolumeClaim[];
  pvs: PersistentVolume[];
  services: Service[];
  /** Pods of every namespace; read only while a claim is held by its protection finalizer. */
  pods?: PodView[];
  /** ReplicaSets (to find the Deployment behind a pod); read with the pods. */
  replicaSets?: WorkloadView[];
  /** What the kubeconfig reaches. */
  identity?: ClusterIdentity;
}

export interface CloudView {
  volumes: CloudVolume[];
  /** undefined: the cloud has no load-balancer service (Octavia) in its catalog. */
  loadBalancers: CloudLoadBalancer[] | undefined;
  floatingIps: CloudFloatingIp[];
}

/** Where a failure came from decides what it may cause: only the cluster's API can be "gone". */
export type FailureSource = 'cluster-api' | 'cloud' | 'credentials';
export type FailureKind = 'unavailable' | 'unauthorized' | 'other';

/**
 * Why a pass refuses to judge what is left: an answer it cannot read proves nothing, so deorbit holds
 * (never finishes) and says so. The name is the condition's reason and the metric's label.
 */
export type RefusalReason = 'CloudAnswerUnreadable' | 'ClusterAnswerUnreadable';

export type Observation =
  { ok: true; satellite: SatelliteView; cloud: CloudView } | { ok: false; source: FailureSource; kind: FailureKind; message: string; refusal?: RefusalReason };

export type DeorbitStep = 'deleting' | 'snapshots' | 'volumes' | 'loadbalancers' | 'done' | 'self-destructed';
/**
 * Why deorbit gave up: time ran out, the cluster's API stayed away, the cloud kept failing a delete,
 * or pods hold claims that inUseClaims: Report leaves to their owners.
 */
export type SelfDestructReason = 'DeorbitHanging' | 'APIUnavailable' | 'CloudDeleteFailed' | 'ClaimsInUse';

/** Why a pass stops short of deleting anything although it could read everything. */
export type StopReason = 'ClusterIdentityChanged' | 'ClusterIdentityConflict' | 'ServiceRecreated';

/** A recorded cloud object that deorbit deleted again itself, and how often. */
export interface CloudRetry {
  id: string;
  kind: 'volume' | 'loadbalancer';
  count: number;
  lastMs: number;
}

export interface Debris {
  volumes: string[];
  loadBalancers: string[];
  floatingIps: string[];
}

/** Persisted between passes; times are epoch milliseconds. */
export interface DeorbitProgress {
  /** 0 before the first pass. */
  attempt: number;
  attemptStartedMs?: number;
  step: DeorbitStep;
  /** First failure of the current run of cluster-API failures; cleared by any success. */
  apiFailingSinceMs?: number;
  lastError?: string;
  /** What is still there, from the last successful look. */
  remaining: { snapshots: number; pvcs: number; services: number; volumes: number; loadBalancers: number };
  /** Cinder volumes of Retain or unclaimed PVs: reported, not waited for. */
  retainedVolumes: string[];
  /** Load balancer IDs learned from Service annotations (kept after the Services are gone). */
  trackedLoadBalancers: string[];
  /** LoadBalancer Services seen (kept after they are gone): their exact LB names prove ownership. */
  seenServices: SeenService[];
  /** Why the last pass held (a RefusalReason or a StopReason), until a pass can read everything again. */
  heldReason?: RefusalReason | StopReason;
  /** The first attempt: every timer (the hang timeout included) counts from here. */
  startedMs?: number;
  /** Cinder volume IDs recorded before their claims were deleted: waited on until Cinder answers 404. */
  trackedVolumes: string[];
  /** Deletes deorbit sent to Cinder or Octavia itself (error_deleting, ERROR), per ID. */
  cloudRetries: CloudRetry[];
  /** Objects kept (backups, kubeward.io/deorbit=keep), as "Kind namespace/name". */
  kept: string[];
  /** LoadBalancer Services deorbit deleted (by UID): one back under the same name was re-created. */
  deletedServices: SeenService[];
  /** Claims pods still mount, as "namespace/claim: pod, pod" (reported, not waited for, under inUseClaims: Report). */
  claimsInUse: string[];
  /** Recorded objects whose delete kept failing in the cloud: reported by ID, no longer waited for. */
  failedDeletes: string[];
  /** Load balancers the final check found created after the first attempt (not the cluster's by proof). */
  createdDuring: string[];
  /** What would be left behind if deorbit stopped now, from the last successful look. */
  leftovers: Debris;
  selfDestructReason?: SelfDestructReason;
  finishedMs?: number;
}

export const INITIAL_PROGRESS: DeorbitProgress = {
  attempt: 0,
  step: 'deleting',
  remaining: { snapshots: 0, pvcs: 0, services: 0, volumes: 0, loadBalancers: 0 },
  retainedVolumes: [],
  trackedLoadBalancers: [],
  seenServices: [],
  trackedVolumes: [],
  cloudRetries: [],
  kept: [],
  deletedServices: [],
  claimsInUse: [],
  failedDeletes: [],
  createdDuring: [],
  leftovers: { volumes: [], loadBalancers: [], floatingIps: [] },
};

export type ObjectKind =
  | 'VolumeSnapshot'
  | 'PersistentVolumeClaim'
  | 'Service'
  | 'Pod'
  | 'Deployment'
  | 'StatefulSet'
  | 'DaemonSet'
  | 'ReplicaSet'
  | 'Job'
  | 'CinderVolume'
  | 'LoadBalancer';

/** A deletion in the cluster (by namespace, name and UID) or in the cloud (CinderVolume, LoadBalancer: `name` is the ID). */
export interface DeleteAction {
  kind: ObjectKind;
  namespace: string;
  name: string;
  uid?: string;
}

export type DeorbitEvent = ManagedClusterEvent;

export type DeorbitOutcome = 'waiting' | 'done' | 'self-destruct' | 'attempt-failed' | 'failed';

export interface DeorbitDecision {
  /** Deletions in order; execution stops at the first failure. */
  deletes: DeleteAction[];
  /** Events to record after the deletions (their own events come from the executor). */
  events: DeorbitEvent[];
  progress: DeorbitProgress;
  outcome: DeorbitOutcome;
  /** Next look, when waiting. */
  requeueAfterMs?: number;
  /** Deletions the per-pass budget held back to a later pass (the count of `deferred`). */
  heldBack: number;
  /** The held-back deletions themselves, in the order later passes would send them. */
  deferred: DeleteAction[];
  /**
   * Progress to record before the deletions: the progress the pass started from plus the new cloud
   * IDs to wait for (and the first attempt's time), so that a restart keeps them. Not the decision's
   * own progress: its step may already be past deletions that have not been sent yet.
   */
  recordFirst?: DeorbitProgress;
  /** The identity to record in status (first pass of a cluster adopted without one). */
  pin?: ClusterIdentity;
}
