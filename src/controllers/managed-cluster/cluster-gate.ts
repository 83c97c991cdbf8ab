// Whether routegc and flight act on a cluster at all (pure): only Running clusters with a cloud (R4, F8).

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
