// The cluster CIDR as a validated scope (pure): every route kubeward removes, every route it adds and
// every security-group rule it opens is bounded by it, so a CIDR that is too wide (0.0.0.0/0 would
// make every IPv4 route of a shared router "the cluster's") or that does not hold the Nodes' pod
// CIDRs (a wrong value) is refused before any decision.
import { cidrWithin, parseCidr, type Cidr } from '../../base/ip.ts';
import type { ClusterNode } from './cluster-view.ts';

/** Narrowest allowed prefix length without force: a /8 is already 16 M IPv4 addresses; /32 is an IPv6 site allocation. */
export const MIN_CLUSTER_PREFIX = { 4: 8, 6: 32 } as const;

export interface CidrPolicy {
  /** Accept prefixes wider than MIN_CLUSTER_PREFIX (never /0). */
  allowWide?: boolean;
}

/** Why `text` cannot be a cluster CIDR, or undefined when it can. */
export function clusterCidrProblem(text: string, policy: CidrPolicy = {}): string | undefined {
  const c = parseCidr(text);
  if (!c) return `"${text}" is not a CIDR such as 100.100.0.0/16`;
  if (c.prefix === 0) return `${text} is the whole address space: a cluster CIDR of /0 would make every route and address the cluster's`;
  const min = MIN_CLUSTER_PREFIX[c.family];
  if (c.prefix < min && !policy.allowWide) return `${text} is wider than /${min}: give the cluster's pod CIDR (or force a wide one explicitly)`;
  return undefined;
}

/** The parsed CIDR, or throws a TypeError naming the problem. */
export function parseClusterCidr(text: string, policy: CidrPolicy = {}): Cidr {
  const problem = clusterCidrProblem(text, policy);
  if (problem) throw new TypeError(problem);
  return parseCidr(text)!;
}

/** Pod CIDRs of Nodes that do not lie inside the cluster CIDR ("node: cidr"); unparsable ones count as outside. */
export function podCidrsOutside(cluster: Cidr, nodes: readonly ClusterNode[]): string[] {
  const out: string[] = [];
  for (const n of nodes) {
    for (const p of n.podCidrs) {
      const c = parseCidr(p);
      if (!c || !cidrWithin(c, cluster)) out.push(`${n.name}: ${p}`);
    }
  }
  return out;
}
