// The emulator's in-memory cloud: identities, Neutron/Nova/Cinder/Octavia objects, and state changes
// that happen later (a server becoming ACTIVE, a volume going away) on the injected clock.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../../src/base/clock.ts';

export interface ProjectRec {
  id: string;
  name: string;
  domain_id: string;
  description: string;
  enabled: boolean;
}
export interface UserRec {
  id: string;
  name: string;
  domain_id: string;
  password: string;
  default_project_id?: string;
  enabled: boolean;
}
export interface RoleRec {
  id: string;
  name: string;
}
export interface AssignmentRec {
  userId: string;
  projectId: string;
  roleId: string;
}
export interface AppCredRec {
  id: string;
  name: string;
  secret: string;
  userId: string;
  projectId: string;
  roleIds: string[];
}
export interface TokenRec {
  value: string;
  userId: string;
  projectId: string;
  roleIds: string[];
  methods: string[];
  issuedAtMs: number;
  expiresAtMs: number;
}

interface Stamped {
  id: string;
  project_id: string;
  created_at: number;
  updated_at: number;
  revision_number: number;
}
export interface NetworkRec extends Stamped {
  name: string;
  external: boolean;
  port_security_enabled: boolean;
  mtu: number;
}
export interface SubnetRec extends Stamped {
  name: string;
  network_id: string;
  cidr: string;
  ip_version: 4 | 6;
  gateway_ip: string | null;
  /** Where ports get their addresses from; addresses outside the pools are given only when asked for. */
  allocation_pools: { start: string; end: string }[];
}
export interface PortRec extends Stamped {
  name: string;
  network_id: string;
  mac_address: string;
  fixed_ips: { subnet_id: string; ip_address: string }[];
  allowed_address_pairs: { ip_address: string; mac_address: string }[];
  security_groups: string[];
  port_security_enabled: boolean;
  device_id: string;
  device_owner: string;
  status: string;
  host: string;
}
export interface RouteRec {
  destination: string;
  nexthop: string;
}
export interface RouterRec extends Stamped {
  name: string;
  routes: RouteRec[];
  admin_state_up: boolean;
  external_gateway_info: unknown;
  description: string;
}
export interface SgRec extends Stamped {
  name: string;
  description: string;
  stateful: boolean;
}
export interface RuleRec extends Stamped {
  security_group_id: string;
  direction: 'ingress' | 'egress';
  ethertype: 'IPv4' | 'IPv6';
  protocol: string | null;
  port_range_min: number | null;
  port_range_max: number | null;
  remote_ip_prefix: string | null;
  normalized_cidr: string | null;
  remote_group_id: string | null;
  description: string;
}
export interface FipRec extends Stamped {
  floating_ip_address: string;
  floating_network_id: string;
  port_id: string | null;
  fixed_ip_address: string | null;
  router_id: string | null;
  description: string;
}
export interface ServerRec {
  id: string;
  name: string;
  project_id: string;
  user_id: string;
  flavorId: string;
  imageId: string;
  status: string;
  vm_state: string;
  task_state: string | null;
  power_state: number;
  created: number;
  updated: number;
  metadata: Record<string, string>;
  tags: string[];
  host: string;
  key_name: string | null;
  /** The server's cell is down: from microversion 2.69 Nova lists it as UNKNOWN with a few fields, before that it leaves it out. */
  cellDown?: boolean;
}
export interface VolumeRec {
  id: string;
  name: string | null;
  project_id: string;
  user_id: string;
  size: number;
  status: string;
  created_at: number;
  updated_at: number;
  description: string | null;
  metadata: Record<string, string>;
  attachments: { server_id: string; attachment_id: string; device: string }[];
  volume_type: string;
}
export interface ListenerRec {
  id: string;
  name: string;
  project_id: string;
  loadbalancer_id: string;
  protocol: string;
  protocol_port: number;
}
export interface LbRec {
  id: string;
  name: string;
  description: string;
  project_id: string;
  provisioning_status: string;
  operating_status: string;
  vip_address: string;
  vip_port_id: string;
  vip_subnet_id: string;
  vip_network_id: string;
  created_at: number;
  updated_at: number;
  tags: string[];
}
export interface FlavorRec {
  id: string;
  name: string;
  vcpus: number;
  ram: number;
  disk: number;
}
export interface ImageRec {
  id: string;
  name: string;
  status: string;
}

/** Kinds of delayed state change that a DelayRule can slow down or block. */
export type DelayKind = 'server-build' | 'server-reboot' | 'server-delete' | 'volume-create' | 'volume-delete' | 'lb-create' | 'lb-update' | 'lb-delete';

export interface DelayRule {
  kind: DelayKind;
  /** One object only; every object of the kind when absent. */
  id?: string;
  /** How long the change takes; ignored when stuck. */
  delayMs?: number;
  /** Never happens (a volume stuck in "deleting"). */
  stuck?: boolean;
  /** Ends in the kind's error state after the delay (a volume in error_deleting, a load balancer in ERROR). */
  fails?: boolean;
}

export interface EmulatorTimings {
  serverBuildMs: number;
  serverRebootMs: number;
  serverDeleteMs: number;
  volumeCreateMs: number;
  volumeDeleteMs: number;
  lbCreateMs: number;
  lbUpdateMs: number;
  lbDeleteMs: number;
  tokenLifetimeMs: number;
}

export const DEFAULT_TIMINGS: EmulatorTimings = {
  serverBuildMs: 300,
  serverRebootMs: 300,
  serverDeleteMs: 100,
  volumeCreateMs: 100,
  volumeDeleteMs: 100,
  lbCreateMs: 300,
  lbUpdateMs: 100,
  lbDeleteMs: 300,
  tokenLifetimeMs: 3_600_000,
};

interface Pending {
  atMs: number;
  kind: DelayKind;
  id: string;
  apply: () => void;
}

export interface StoreLimits {
  /** Neutron max_routes (30 upstream). */
  maxRoutes: number;
  /** Neutron max_allowed_address_pair (10 upstream). */
  maxAddressPairs: number;
  /** Nova/Cinder/Octavia osapi_max_limit (1000 upstream). */
  maxPageSize: number;
}

export class EmulatorStore {
  readonly clock: Clock;
  readonly timings: EmulatorTimings;
  readonly limits: StoreLimits;
  readonly projects = new Map<string, ProjectRec>();
  readonly users = new Map<string, UserRec>();
  readonly roles = new Map<string, RoleRec>();
  assignments: AssignmentRec[] = [];
  readonly appCreds = new Map<string, AppCredRec>();
  readonly tokens = new Map<string, TokenRec>();
  readonly networks = new Map<string, NetworkRec>();
  readonly subnets = new Map<string, SubnetRec>();
  readonly ports = new Map<string, PortRec>();
  readonly routers = new Map<string, RouterRec>();
  readonly securityGroups = new Map<string, SgRec>();
  readonly rules = new Map<string, RuleRec>();
  readonly floatingIps = new Map<string, FipRec>();
  readonly servers = new Map<string, ServerRec>();
  readonly volumes = new Map<string, VolumeRec>();
  readonly loadBalancers = new Map<string, LbRec>();
  readonly listeners = new Map<string, ListenerRec>();
  readonly flavors = new Map<string, FlavorRec>();
  readonly images = new Map<string, ImageRec>();
  delayRules: DelayRule[] = [];
  /** Neutron extension aliases the emulator advertises and honours (revision-if-match, extraroute-atomic). */
  neutronExtensions = new Set<string>();
  #pending: Pending[] = [];

  constructor(clock: Clock, timings: EmulatorTimings, limits: StoreLimits) {
    this.clock = clock;
    this.timings = timings;
    this.limits = limits;
  }

  newId(): string {
    return randomUUID();
  }

  newSecret(): string {
    return randomBytes(24).toString('base64url');
  }

  /**
   * Runs fn after the kind's delay (a DelayRule may change it, block it for good, or make it end in
   * `fail`, the kind's error state, when the kind has one).
   */
  schedule(kind: DelayKind, id: string, defaultMs: number, done: () => void, fail?: () => void): void {
    this.#pending = this.#pending.filter((p) => !(p.kind === kind && p.id === id));
    const rule = [...this.delayRules].reverse().find((r) => r.kind === kind && (r.id === undefined || r.id === id));
    if (rule?.stuck) return;
    const apply = rule?.fails && fail ? fail : done;
    const delay = rule?.delayMs ?? defaultMs;
    if (delay <= 0) return apply();
    this.#pending.push({ atMs: this.clock.now() + delay, kind, id, apply });
  }

  /** Applies every change that is due; called before each request is answered. */
  tick(): void {
    const now = this.clock.now();
    const due = this.#pending.filter((p) => p.atMs <= now).sort((a, b) => a.atMs - b.atMs);
    this.#pending = this.#pending.filter((p) => p.atMs > now);
    for (const p of due) p.apply();
  }

  /** Changes still waiting, for the admin API. */
  pendingChanges(): { kind: DelayKind; id: string; inMs: number }[] {
    const now = this.clock.now();
    return this.#pending.map((p) => ({ kind: p.kind, id: p.id, inMs: p.atMs - now }));
  }

  roleNames(ids: string[]): string[] {
    return ids.map((id) => this.roles.get(id)?.name ?? id);
  }

  projectRoleIds(userId: string, projectId: string): string[] {
    const direct = this.assignments.filter((a) => a.userId === userId && a.projectId === projectId).map((a) => a.roleId);
    // Keystone's default implied roles: admin implies member, member implies reader.
    const names = new Set(this.roleNames(direct));
    if (names.has('admin')) names.add('member');
    if (names.has('member')) names.add('reader');
    return [...this.roles.values()].filter((r) => names.has(r.name)).map((r) => r.id);
  }

  findRoleByName(name: string): RoleRec | undefined {
    return [...this.roles.values()].find((r) => r.name === name);
  }
}
