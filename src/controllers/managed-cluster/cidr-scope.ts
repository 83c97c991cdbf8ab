// The cluster CIDR as a validated scope (pure): every route kubeward removes, every route it adds and
// every security-group rule it opens is bounded by it, so a CIDR that is too wide (0.0.0.0/0 would
// make every IPv4 route of a shared router "the cluster's") or that does not hold the Nodes' pod
// CIDRs (a wrong value) is refused before any decision.
import { cidrWithin, formatCidr, ipBits, parseCidr, type Cidr } from '../../base/ip.ts';
import type { ClusterNode } from './cluster-view.ts';

/** Narrowest allowed prefix length without force: a /8 is already 16 M IPv4 addresses; /32 is an IPv6 site allocation. */
export const MIN_CLUSTER_PREFIX = { 4: 8, 6: 32 } as const;

export interface CidrPolicy {
  /** Accept prefixes wider than MIN_CLUSTER_PREFIX (never /0). */
  allowWide?: boolean;
  /** Accept a cluster CIDR more than MAX_CIDR_SLACK_BITS wider than the prefix covering the Nodes' pod CIDRs. */
  forceClusterCidr?: boolean;
}

/**
 * How many bits wider than the prefix that covers every Node's pod CIDR the cluster CIDR may be: 8
 * bits is room for 256 times the pod CIDRs in use (a /16 for one Node's /24). A cluster CIDR wider
 * than that, such as a /8 for Nodes in one /22, holds address space other clusters on the same
 * router use, so its routes and rules are not provably this cluster's.
 */
export const MAX_CIDR_SLACK_BITS = 8;

/** Why `text` cannot be a cluster CIDR, or undefined when it can. */
export function clusterCidrProblem(text: string, policy: CidrPolicy = {}): string | undefined {
  const c = parseCidr(text);
  if (!c) return `"${text}" is not a CIDR such as 100.100.0.0/16`;
  if (c.prefix === 0) return `${text} is the whole address space: a cluster CIDR of /0 would make every route and address the cluster's`;
  const min = MIN_CLUSTER_PREFIX[c.family];
  if (c.prefix < min && !policy.allowWide) return `${text} is wider than /${min}: give the cluster's pod CIDR (or force a wide one explicitly)`;
  return undefined;
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

/** The narrowest prefix that holds every CIDR given (of the cluster's family); undefined when there is none. */
export function coveringPrefix(cidrs: readonly Cidr[]): Cidr | undefined {
  const first = cidrs[0];
  if (!first) return undefined;
  const bits = ipBits(first.family);
  let prefix = Math.min(...cidrs.map((c) => c.prefix));
  // Shorten the prefix until every base agrees with the first in its top `prefix` bits.
  const top = (v: bigint, p: number) => v >> BigInt(bits - p);
  while (prefix > 0 && cidrs.some((c) => top(c.base, prefix) !== top(first.base, prefix))) prefix--;
  const base = prefix === 0 ? 0n : top(first.base, prefix) << BigInt(bits - prefix);
  return { family: first.family, base, prefix, address: base };
}

/**
 * Why the cluster CIDR is too wide for the Nodes' pod CIDRs (more than MAX_CIDR_SLACK_BITS wider
 * than the prefix covering them), or undefined when it is not, when forced, or when no Node has a
 * pod CIDR of the cluster's family (then there is nothing to compare with).
 */
export function cidrSlackProblem(cluster: Cidr, nodes: readonly ClusterNode[], policy: CidrPolicy = {}): string | undefined {
  if (policy.forceClusterCidr) return undefined;
  const pods = nodes.flatMap((n) => n.podCidrs.flatMap((p) => parseCidr(p) ?? [])).filter((c) => c.family === cluster.family);
  const cover = coveringPrefix(pods);
  if (!cover || cover.prefix - cluster.prefix <= MAX_CIDR_SLACK_BITS) return undefined;
  return (
    `${formatCidr(cluster)} is ${cover.prefix - cluster.prefix} bits wider than ${formatCidr(cover)}, the prefix covering the Nodes' pod CIDRs ` +
    `(at most ${MAX_CIDR_SLACK_BITS}): routes and rules in it may be another cluster's; give the cluster's own pod CIDR, or force it explicitly`
  );
}
