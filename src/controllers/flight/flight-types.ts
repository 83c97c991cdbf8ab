// What one flight round observes, decides and remembers (types only).
import type { ExtraRoute, SecurityGroup } from '../../clients/openstack/openstack-types.ts';
import type { ClusterInstance, ClusterNode } from '../managed-cluster/cluster-view.ts';

export type RepairKind =
  'security-group-rules' | 'security-group-assignment' | 'unregistered-instances' | 'errored-instances' | 'service-user-roles' | 'tags-and-metadata' | 'routes';

export type FlightAction =
  | { kind: 'create-rule'; groupId: string; protocol: 'tcp' | 'udp' | 'icmp'; ethertype: 'IPv4' | 'IPv6'; remoteCidr: string }
  | { kind: 'resync-security-group'; groupId: string; nodes: string[] }
  | { kind: 'add-security-group'; instanceId: string; instanceName: string; group: string }
  | { kind: 'reboot'; instanceId: string; instanceName: string; type: 'SOFT' | 'HARD'; ageMs: number }
  | { kind: 'delete-instance'; instanceId: string; instanceName: string; why: 'unregistered' | 'errored' }
  | { kind: 'assign-role'; role: string }
  | { kind: 'add-tags'; instanceId: string; instanceName: string; tags: string[] }
  | { kind: 'merge-metadata'; instanceId: string; instanceName: string; metadata: Record<string, string> }
  | { kind: 'add-route'; route: ExtraRoute; node: string };

export type NodeConditionType = 'kubeward.io/RouteMissing' | 'kubeward.io/RouteConflict';

/** A Node condition flight wants to hold (True with a reason, or False once fixed). */
export interface NodeConditionWish {
  node: string;
  type: NodeConditionType;
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** Something found that is reported, not repaired. */
export interface FlightFinding {
  repair: RepairKind;
  reason: string;
  message: string;
  node?: string;
}

/** Per cluster, kept between rounds: when the reboots of unregistered instances happened. */
export interface FlightMemory {
  softRebootAtMs: Record<string, number>;
  hardRebootAtMs: Record<string, number>;
  /** Instances that had a Node at some point (also kept on the instance as metadata). */
  registered: string[];
  /** Nodes and proven instances the last round saw, for the shrink check. */
  lastNodeCount?: number;
  lastInstanceCount?: number;
}

export const emptyFlightMemory = (): FlightMemory => ({ softRebootAtMs: {}, hardRebootAtMs: {}, registered: [] });

export interface FlightObservation {
  nowMs: number;
  /** The cluster's proven instances (cluster-identity.ts): the only ones flight may act on. */
  instances: ClusterInstance[];
  /** Every candidate instance (proven, or only named by a Node): their addresses count as live next hops. Default: instances. */
  candidates?: ClusterInstance[];
  /** Servers Nova listed as UNKNOWN (down cell): the instance list may be partial. */
  unknownServers?: number;
  /** Names more than one candidate server carries (left alone, reported). */
  duplicateNames?: string[];
  /** Stamps of an earlier owner of this cluster: owner id -> server ids (cluster-identity.ts). */
  previousOwners?: ReadonlyMap<string, readonly string[]>;
  /** Servers two clusters could both claim: left alone, reported. */
  conflicts?: readonly { instanceId: string; instanceName: string; why: string }[];
  /** undefined when the Node list could not be read: nothing is rebooted or deleted then. */
  nodes: ClusterNode[] | undefined;
  /** Security groups with the cluster's group name (zero, one or, wrongly, several). */
  groups: SecurityGroup[] | undefined;
  /** Role names the service user holds on the project; undefined when not checked. */
  serviceUserRoles: string[] | undefined;
  /** The router's routes; undefined when the cluster has no router or it was not read. */
  routes: ExtraRoute[] | undefined;
  memory: FlightMemory;
}

export interface FlightOptions {
  clusterName: string;
  /** The value of the owner metadata and tag flight writes on proven instances (the ManagedCluster's UID). */
  ownerId?: string;
  /** "<namespace>/<name>" of the ManagedCluster, written beside the owner id. */
  ownerRef?: string;
  clusterCidr: string;
  /** Accept a cluster CIDR wider than /8 (never /0). */
  allowWide?: boolean;
  /** Accept a cluster CIDR far wider than the Nodes' pod CIDRs for the group's rules (cidr-scope.ts). */
  forceClusterCidr?: boolean;
  securityGroupName: string;
  /** Name prefixes of the cluster's instances, one per node pool ("kks-k1-small-"). */
  pools: { name: string; prefix: string }[];
  softRebootAfterMs: number;
  hardRebootAfterMs: number;
  deleteAfterMs: number;
  /** false: no reboots, delete once older than the three durations together (Kubernikus's behaviour). */
  rebootBeforeDelete: boolean;
  maxDeletionsPerRound: number;
  /** Per-round budgets of the other destructive kinds (defaults in blast-budget.ts). */
  maxRebootsPerRound?: number;
  maxMetadataWritesPerRound?: number;
  maxRuleChangesPerRound?: number;
  /** Refuse when the Node or instance list lost more than this fraction since the last round (default 0.5). */
  maxShrinkFraction?: number;
  wantedRoles: string[];
  forceSecurityGroupResync: boolean;
  repairMissingRoutes: boolean;
  routeLimit: number;
}

export interface FlightPlan {
  /** What this round does (within budgets); a dry run reports exactly these. */
  actions: FlightAction[];
  /** Decided but held back by a per-round budget. */
  heldBack: FlightAction[];
  /** Why no destructive action happens this round, when the view is in doubt. */
  refusal?: { code: string; message: string };
  findings: FlightFinding[];
  conditions: NodeConditionWish[];
  memory: FlightMemory;
}

/** Metadata key flight writes on an instance once it has a Node: survives operator restarts. */
export const REGISTERED_METADATA_KEY = 'kubeward:node';
