// The narrow view of OpenStack that flight needs, and its adapter on kubeward's client. Role checks
// and assignments use the admin client when one is given (the service user cannot grant itself roles).
import { KubewardError } from '../../base/errors.ts';
import type { OpenStackClient } from '../../clients/openstack/openstack-client.ts';
import type { RebootType, Router, SecurityGroup, SecurityGroupRuleCreate } from '../../clients/openstack/openstack-types.ts';
import { toClusterInstance } from '../managed-cluster/cluster-adapters.ts';
import type { ClusterInstance } from '../managed-cluster/cluster-view.ts';

export interface FlightCloud {
  listServers(signal?: AbortSignal): Promise<ClusterInstance[]>;
  listGroups(name: string, signal?: AbortSignal): Promise<SecurityGroup[]>;
  createRule(rule: SecurityGroupRuleCreate, signal?: AbortSignal): Promise<string>;
  deleteRule(id: string, signal?: AbortSignal): Promise<void>;
  addSecurityGroup(serverId: string, group: string, signal?: AbortSignal): Promise<void>;
  reboot(serverId: string, type: RebootType, signal?: AbortSignal): Promise<void>;
  deleteServer(serverId: string, signal?: AbortSignal): Promise<void>;
  addTag(serverId: string, tag: string, signal?: AbortSignal): Promise<void>;
  mergeMetadata(serverId: string, metadata: Record<string, string>, signal?: AbortSignal): Promise<void>;
  getRouter(id: string, signal?: AbortSignal): Promise<Router | undefined>;
  /** Role names of the service user on its project. */
  serviceUserRoles(signal?: AbortSignal): Promise<string[]>;
  assignRole(role: string, signal?: AbortSignal): Promise<void>;
}

export function openStackFlightCloud(os: OpenStackClient, admin?: OpenStackClient): FlightCloud {
  return {
    listServers: async (signal) => (await os.nova.listServers({}, { signal })).map(toClusterInstance),
    listGroups: (name, signal) => os.neutron.listSecurityGroups({ name }, { signal }),
    createRule: async (rule, signal) => (await os.neutron.createSecurityGroupRule(rule, { signal })).id,
    deleteRule: async (id, signal) => void (await os.neutron.deleteSecurityGroupRule(id, { signal })),
    addSecurityGroup: (id, group, signal) => os.nova.addSecurityGroup(id, group, { signal }),
    reboot: (id, type, signal) => os.nova.reboot(id, type, { signal }),
    deleteServer: async (id, signal) => void (await os.nova.deleteServer(id, { signal })),
    addTag: (id, tag, signal) => os.nova.addTag(id, tag, { signal }),
    mergeMetadata: async (id, md, signal) => void (await os.nova.mergeMetadata(id, md, { signal })),
    getRouter: (id, signal) => os.neutron.getRouter(id, { signal }),
    serviceUserRoles: async (signal) => {
      const me = await os.keystone.tokenInfo({ signal });
      // The token's roles are fixed when it is issued; the admin view sees an assignment at once.
      if (!admin) return me.roles;
      return (await admin.keystone.listProjectUserRoles(me.projectId, me.userId, { signal })).map((r) => r.name);
    },
    assignRole: async (role, signal) => {
      if (!admin) throw new KubewardError('E_USAGE', `the service user lacks role ${role} and no admin credentials were given to assign it (--admin-os-cloud)`);
      const me = await os.keystone.tokenInfo({ signal });
      const found = (await admin.keystone.listRoles({ signal })).find((r) => r.name.toLowerCase() === role.toLowerCase());
      if (!found) throw new KubewardError('E_NOT_FOUND', `Keystone has no role named ${role}`);
      await admin.keystone.assignProjectUserRole(me.projectId, me.userId, found.id, { signal });
    },
  };
}
