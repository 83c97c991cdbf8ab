// The rules kubeward routes wants in the kernel, as a model (pure): VIP states + provider + options
// in, NAT and drop rules out. Renderers turn the model into nft or iptables-restore text.
import type { VipState } from './vip-states.ts';
import { checkPeer } from './decide-peer-address.ts';

export type Provider = 'azure' | 'gcp';
export type NatTarget = 'redirect' | 'node-ip';
/** TCP destination ports the rules match, or every port and protocol. */
export type PortMatch = readonly number[] | 'all';
export type Family = 4 | 6;
export type NatHook = 'prerouting' | 'output';

export interface NatRule {
  hook: NatHook;
  family: Family;
  vips: string[];
  ports: PortMatch;
  /** DNAT to this node address; undefined means `redirect` (loopback for output, ingress address for prerouting). */
  to?: string;
  /** Set on output rules that send a down VIP's new connections to a healthy peer apiserver. */
  peer?: true;
}

/** A down VIP whose node-originated new connections go to a peer apiserver (decide-down-peers.ts). */
export interface DownPeerRedirect {
  vip: string;
  family: Family;
  to: string;
}

export interface ForwardDrop {
  family: Family;
  /** Source ranges whose forwarded packets are dropped (GCP health checkers). */
  sources: string[];
}

export interface DesiredRuleset {
  nat: NatRule[];
  forwardDrop: ForwardDrop[];
}

export interface DesiredInput {
  provider: Provider;
  /** Every managed VIP with its state (decideVipStates with the managed list). */
  vips: readonly VipState[];
  ports: PortMatch;
  natTarget: NatTarget;
  /** Node addresses per family, for --nat-target node-ip. */
  nodeIps: Partial<Record<Family, string>>;
  /** GCP only: health-checker source ranges to drop when forwarded. */
  healthCheckerCidrs: readonly string[];
  /** Down VIPs to send to a peer (output hook only); each is checked again here before it becomes a rule. */
  downPeerRedirects?: readonly DownPeerRedirect[];
}

export interface DesiredResult {
  ruleset: DesiredRuleset;
  /** Things that kept a rule from being made, for logs and /status. */
  problems: string[];
}

export function buildDesiredRuleset(input: DesiredInput): DesiredResult {
  const problems: string[] = [];
  const up = input.vips.filter((v) => v.up);
  // GCP: LB traffic and the LB's health checks arrive with dst = VIP and must reach this node
  // whatever our own state; only the node's own traffic follows health. Azure: the LB rewrites the
  // destination, so prerouting only sees pods' traffic, which follows health like the node's.
  const preroutingVips = input.provider === 'gcp' ? input.vips : up;
  const nat: NatRule[] = [];
  for (const family of [4, 6] as const) {
    const target = natTargetFor(input, family, problems);
    if (target === null) continue;
    for (const [hook, list] of [
      ['prerouting', preroutingVips],
      ['output', up],
    ] as const) {
      const vips = list.filter((v) => v.family === family).map((v) => v.vip);
      if (vips.length) nat.push({ hook, family, vips, ports: input.ports, ...(target ? { to: target } : {}) });
    }
  }
  nat.push(...peerRules(input, problems));
  const forwardDrop: ForwardDrop[] = [];
  if (input.provider === 'gcp') {
    for (const family of [4, 6] as const) {
      const sources = input.healthCheckerCidrs.filter((c) => (c.includes(':') ? 6 : 4) === family);
      if (sources.length) forwardDrop.push({ family, sources: [...sources] });
    }
  }
  return { ruleset: { nat, forwardDrop }, problems };
}

/**
 * One output rule per down VIP with a peer, matching exactly that VIP and the same ports as the
 * other rules: nothing but the node's own traffic to a managed, down VIP can be captured, and the
 * target is never loopback, a VIP, or an address of the other family.
 */
function peerRules(input: DesiredInput, problems: string[]): NatRule[] {
  const rules: NatRule[] = [];
  const managed = new Map(input.vips.map((v) => [v.vip, v]));
  for (const r of input.downPeerRedirects ?? []) {
    const state = managed.get(r.vip);
    const peer = checkPeer(r.to);
    const why =
      state === undefined
        ? 'is not a managed VIP'
        : state.up
          ? 'is up'
          : !peer.ok
            ? `has a peer that ${peer.reason}`
            : peer.peer !== r.to || peer.family !== state.family
              ? 'has a peer of the other family or in a non-canonical form'
              : managed.has(r.to)
                ? 'has a peer that is itself a managed VIP'
                : undefined;
    if (why !== undefined) {
      problems.push(`down-peer redirect for ${r.vip} left out: the VIP ${why}`);
      continue;
    }
    rules.push({ hook: 'output', family: state!.family, vips: [r.vip], ports: input.ports, to: r.to, peer: true });
  }
  return rules;
}

/** undefined: redirect; a string: DNAT to it; null: no usable target for this family. */
function natTargetFor(input: DesiredInput, family: Family, problems: string[]): string | undefined | null {
  if (input.natTarget === 'redirect') return undefined;
  const ip = input.nodeIps[family];
  if (ip !== undefined) return ip;
  if (input.vips.some((v) => v.family === family)) {
    problems.push(`--nat-target node-ip: no --node-ip for IPv${family}, so IPv${family} VIPs get no rules`);
  }
  return null;
}

/** What is in force for one VIP, in words, for /status ("output redirect tcp/6443"). */
export function describeRulesFor(ruleset: DesiredRuleset, vip: string): string[] {
  return ruleset.nat
    .filter((r) => r.vips.includes(vip))
    .map(
      (r) =>
        `${r.hook} ${r.to ? `dnat to ${r.to}` : 'redirect'} ${r.ports === 'all' ? 'all ports' : `tcp/${r.ports.join(',')}`}${r.peer ? ' (healthy peer while down)' : ''}`,
    );
}
