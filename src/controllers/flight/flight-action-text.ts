// How flight's actions read in events and logs, which repair each belongs to, and which Node it concerns (pure).
import type { FlightAction, RepairKind } from './flight-types.ts';

export function repairOf(a: FlightAction): RepairKind {
  switch (a.kind) {
    case 'create-rule':
    case 'resync-security-group':
      return 'security-group-rules';
    case 'add-security-group':
      return 'security-group-assignment';
    case 'reboot':
      return 'unregistered-instances';
    case 'delete-instance':
      return a.why === 'errored' ? 'errored-instances' : 'unregistered-instances';
    case 'assign-role':
      return 'service-user-roles';
    case 'add-tags':
    case 'merge-metadata':
      return 'tags-and-metadata';
    case 'add-route':
      return 'routes';
  }
}

export function describeAction(a: FlightAction): string {
  const min = (ms: number) => `${Math.round(ms / 60_000)} min`;
  switch (a.kind) {
    case 'create-rule':
      return `add ingress ${a.protocol} rule from ${a.remoteCidr} to security group ${a.groupId}`;
    case 'resync-security-group':
      return `force a resync of security group ${a.groupId} for Nodes with broken pod traffic (${a.nodes.join(', ')})`;
    case 'add-security-group':
      return `add security group ${a.group} to instance ${a.instanceName}`;
    case 'reboot':
      return `${a.type.toLowerCase()}-reboot instance ${a.instanceName}, ${min(a.ageMs)} old and still no Node`;
    case 'delete-instance':
      return a.why === 'errored' ? `delete errored instance ${a.instanceName}` : `delete instance ${a.instanceName}, which never became a Node after reboots`;
    case 'assign-role':
      return `assign role ${a.role} to the service user`;
    case 'add-tags':
      return `tag instance ${a.instanceName} with ${a.tags.join(', ')}`;
    case 'merge-metadata':
      return `set metadata ${Object.keys(a.metadata).join(', ')} on instance ${a.instanceName}`;
    case 'add-route':
      return `add the missing route ${a.route.destination} via ${a.route.nexthop} for Node ${a.node}`;
  }
}

/** The Node an action concerns, for its event (instance repairs concern instances without a Node). */
export function nodeOfAction(a: FlightAction): string | undefined {
  return a.kind === 'add-route' ? a.node : undefined;
}
