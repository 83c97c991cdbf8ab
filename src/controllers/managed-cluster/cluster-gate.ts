// Whether routegc and flight act on a cluster at all (pure): only Running clusters with a cloud (R4,
// F8); and whether a deleted cluster's routes may be cleaned up, by the rule deorbit follows.
import { isDeorbitRequested, type DeorbitRequestView } from './deorbit-lifecycle.ts';

export interface GateInput {
  phase?: string;
  noCloud?: boolean;
  deleting?: boolean;
}

/** The reason to skip, or undefined to go ahead. Termination clean-up is deorbit's call, not this gate's. */
export function skipReason(c: GateInput): string | undefined {
  if (c.noCloud) return 'the cluster has no cloud resources (noCloud)';
  if (c.deleting) return 'the cluster is being deleted';
  if (c.phase !== 'Running') return `phase is ${c.phase ?? 'unset'}, not Running`;
  return undefined;
}

export interface TerminationGateInput extends DeorbitRequestView {
  spec: DeorbitRequestView['spec'] & { noCloud?: boolean; terminationProtection?: boolean };
}

export interface TerminationRefusal {
  code: 'NoCloud' | 'DeletionPolicyOrphan' | 'TerminationProtected';
  message: string;
}

/**
 * Why the routes of a deleted cluster must be left alone, or undefined when termination may remove
 * them. The rule is deorbit's own (isDeorbitRequested): a deleted object alone proves nothing, so an
 * Orphan cluster (the default) that lingers on another finalizer keeps its live routes.
 */
export function terminationRefusal(c: TerminationGateInput): TerminationRefusal | undefined {
  if (c.spec.noCloud) return { code: 'NoCloud', message: 'the cluster has no cloud resources (noCloud)' };
  if (!isDeorbitRequested(c)) {
    const policy = c.spec.deletionPolicy ?? 'Orphan (default)';
    return {
      code: 'DeletionPolicyOrphan',
      message: `deletionPolicy is ${policy} and the cluster is not Terminating: its routes are left as they are; set spec.deletionPolicy: Delete to remove them`,
    };
  }
  // As deorbit: protection says wait, whoever would clean up (routegc alone runs without deorbit's finalizer).
  if (c.spec.terminationProtection) return { code: 'TerminationProtected', message: 'terminationProtection is set: the routes stay until it is cleared' };
  return undefined;
}
