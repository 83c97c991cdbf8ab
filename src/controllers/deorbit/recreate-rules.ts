// Pure rule about Services that come back: a Service under the namespace and name of one deorbit
// deleted, with another UID, was made again by someone (a GitOps agent, an operator). Deleting it
// again would make the cloud controller build and tear down a load balancer per pass; deorbit stops
// and names the re-creator from the Service's managedFields instead.
import type { Service } from '../../clients/kube/kube-types.ts';
import type { SeenService } from './deorbit-types.ts';

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  time?: string;
}

/** The field managers of an object, earliest first (the first made it). */
export function managersOf(svc: Service): string[] {
  const entries = ((svc.metadata as { managedFields?: ManagedFieldsEntry[] }).managedFields ?? []).filter((e) => e.manager);
  const sorted = [...entries].sort((a, b) => (a.time ?? '').localeCompare(b.time ?? ''));
  return [...new Set(sorted.map((e) => e.manager!))];
}

/** "namespace/name (UID) by manager, manager" for each Service re-created after deorbit deleted it. */
export function judgeRecreated(services: readonly Service[], deleted: readonly SeenService[]): string[] {
  const byKey = new Map(deleted.map((d) => [`${d.namespace}/${d.name}`, d]));
  const out: string[] = [];
  for (const svc of services) {
    const key = `${svc.metadata.namespace ?? ''}/${svc.metadata.name}`;
    const gone = byKey.get(key);
    if (!gone?.uid || !svc.metadata.uid || gone.uid === svc.metadata.uid) continue;
    const managers = managersOf(svc);
    out.push(`${key} (uid ${svc.metadata.uid}) by ${managers.length ? managers.join(', ') : 'an unknown manager (no managedFields)'}`);
  }
  return out.sort();
}
