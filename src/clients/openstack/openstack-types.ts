// The OpenStack resources kubeward reads and writes, as the REST APIs return them (fields we use only).

/** One address of a Nova server, as in `addresses.<network>[]`. */
export interface ServerAddress {
  addr: string;
  version: 4 | 6;
  'OS-EXT-IPS:type'?: 'fixed' | 'floating';
  'OS-EXT-IPS-MAC:mac_addr'?: string;
}

/**
 * A Nova server from GET /servers/detail or /servers/{id} (microversion 2.69). A server in a down
 * cell comes with status "UNKNOWN" and only id, status, tenant_id, created and links: the other
 * fields are then absent whatever their type says (the adapters read them with defaults).
 */
export interface Server {
  id: string;
  name: string;
  status: string;
  tenant_id: string;
  user_id?: string;
  created: string;
  updated?: string;
  addresses: Record<string, ServerAddress[]>;
  /** Names only; Nova derives them from the server's ports. */
  security_groups?: { name: string }[];
  metadata: Record<string, string>;
  tags?: string[];
  'OS-EXT-STS:vm_state'?: string;
  'OS-EXT-STS:task_state'?: string | null;
  'OS-EXT-STS:power_state'?: number;
  'OS-EXT-SRV-ATTR:host'?: string | null;
}

export type RebootType = 'SOFT' | 'HARD';

/** Filters for listing servers; `name` is a regular expression on the Nova side. */
export interface ServerListFilter {
  name?: string;
  status?: string;
  /** Servers having all of these tags. */
  tags?: string[];
  /** Servers having any of these tags. */
  tagsAny?: string[];
  /** Admin only: servers of every project. */
  allTenants?: boolean;
  projectId?: string;
}

export interface ExtraRoute {
  destination: string;
  nexthop: string;
}

/** A Neutron router. `routes` come back sorted by Neutron, never in request order. */
export interface Router {
  id: string;
  name: string;
  project_id: string;
  status: string;
  routes: ExtraRoute[];
  revision_number: number;
  admin_state_up?: boolean;
  external_gateway_info?: unknown;
}

export interface FixedIp {
  subnet_id: string;
  ip_address: string;
}

export interface AllowedAddressPair {
  ip_address: string;
  mac_address?: string;
}

export interface Port {
  id: string;
  name: string;
  network_id: string;
  project_id: string;
  mac_address: string;
  fixed_ips: FixedIp[];
  allowed_address_pairs: AllowedAddressPair[];
  security_groups: string[];
  port_security_enabled?: boolean;
  device_id: string;
  device_owner: string;
  status: string;
  revision_number: number;
}

export interface PortListFilter {
  networkId?: string;
  deviceId?: string;
  deviceOwner?: string;
  /** Ports with this fixed IP address (Neutron's `fixed_ips=ip_address=<ip>`). */
  fixedIp?: string;
  projectId?: string;
}

export interface PortUpdate {
  allowed_address_pairs?: AllowedAddressPair[];
  security_groups?: string[];
  port_security_enabled?: boolean;
  name?: string;
}

export type RuleDirection = 'ingress' | 'egress';
export type EtherType = 'IPv4' | 'IPv6';

export interface SecurityGroupRule {
  id: string;
  security_group_id: string;
  direction: RuleDirection;
  ethertype: EtherType;
  protocol: string | null;
  port_range_min: number | null;
  port_range_max: number | null;
  remote_ip_prefix: string | null;
  remote_group_id: string | null;
  description?: string;
  project_id: string;
}

export interface SecurityGroup {
  id: string;
  name: string;
  description: string;
  project_id: string;
  security_group_rules: SecurityGroupRule[];
  stateful?: boolean;
  revision_number: number;
}

export interface SecurityGroupRuleCreate {
  security_group_id: string;
  direction: RuleDirection;
  ethertype?: EtherType;
  protocol?: string | null;
  port_range_min?: number | null;
  port_range_max?: number | null;
  remote_ip_prefix?: string | null;
  remote_group_id?: string | null;
  description?: string;
}

export interface NeutronExtension {
  alias: string;
  name: string;
  description?: string;
}

export interface FloatingIp {
  id: string;
  floating_ip_address: string;
  floating_network_id: string;
  fixed_ip_address: string | null;
  port_id: string | null;
  router_id: string | null;
  project_id: string;
  status: string;
  description?: string;
}

export interface FloatingIpListFilter {
  portId?: string;
  projectId?: string;
  floatingIpAddress?: string;
}

/** A Cinder v3 volume. */
export interface Volume {
  id: string;
  name: string | null;
  status: string;
  size: number;
  created_at: string;
  'os-vol-tenant-attr:tenant_id'?: string;
  attachments?: { server_id: string; attachment_id?: string; device?: string }[];
  metadata?: Record<string, string>;
}

export interface VolumeListFilter {
  /** Admin only: volumes of this project (implies all_tenants). */
  projectId?: string;
  status?: string;
  name?: string;
}

export type ProvisioningStatus = 'ACTIVE' | 'DELETED' | 'ERROR' | 'PENDING_CREATE' | 'PENDING_UPDATE' | 'PENDING_DELETE';

/** An Octavia load balancer. */
export interface LoadBalancer {
  id: string;
  name: string;
  description: string;
  project_id: string;
  provisioning_status: ProvisioningStatus;
  operating_status: string;
  vip_address: string;
  vip_port_id: string;
  vip_subnet_id?: string;
  listeners: { id: string }[];
  pools: { id: string }[];
  tags?: string[];
  /** UTC, without a zone ("2017-02-28T00:41:44"). */
  created_at?: string;
}

export interface LoadBalancerListFilter {
  name?: string;
  projectId?: string;
  vipAddress?: string;
}

/** An entry of the Keystone v3 token's service catalog. */
export interface CatalogEntry {
  type: string;
  name?: string;
  id?: string;
  endpoints: CatalogEndpoint[];
}

export interface CatalogEndpoint {
  id?: string;
  interface: 'public' | 'internal' | 'admin';
  region?: string;
  region_id?: string;
  url: string;
}

export interface Role {
  id: string;
  name: string;
}

export interface Domain {
  id: string;
  name: string;
}

export interface User {
  id: string;
  name: string;
  domain_id: string;
}
