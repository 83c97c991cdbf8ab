// Which down VIPs have the node's own new connections sent to a healthy peer apiserver, and which
// peer (pure). On GCP the load balancer keeps sending a node's own VIP traffic back to that node for
// 10-15 s after the watcher has published `.down` (OCPBUGS-100298): without this, every new
// connection in that window reaches the dead local apiserver. The window is counted from the first
// sync that saw the VIP down; after it the load balancer has withdrawn the node and its path is the
// better one again (it spreads load and follows the LB's own health view).
import type { DownPeerRedirect } from './desired-ruleset.ts';
import type { VipState } from './vip-states.ts';
import { checkPeer } from './decide-peer-address.ts';

export interface DownPeerInput {
  nowMs: number;
  vips: readonly VipState[];
  /** When each VIP was first seen down, from the previous decision. */
  downSince: ReadonlyMap<string, number>;
  windowMs: number;
  /** Peers whose last check passed, in the configured order (the first usable one is picked). */
  healthyPeers: readonly string[];
}

export interface DownPeerDecision {
  downSince: Map<string, number>;
  redirects: DownPeerRedirect[];
  /** Down VIPs inside the window left to today's path, with the reason (for logs and /status). */
  unserved: { vip: string; reason: string }[];
  /** When a window closes, so the caller syncs again then; undefined: none open. */
  nextChangeAtMs?: number;
}

export function decideDownPeers(input: DownPeerInput): DownPeerDecision {
  const downSince = new Map<string, number>();
  const redirects: DownPeerRedirect[] = [];
  const unserved: { vip: string; reason: string }[] = [];
  const managed = new Set(input.vips.map((v) => v.vip));
  let nextChangeAtMs: number | undefined;
  for (const v of input.vips) {
    if (v.up) continue; // an up VIP's window is over: a later down starts a new one
    const since = input.downSince.get(v.vip) ?? input.nowMs;
    downSince.set(v.vip, since);
    const endsAt = since + input.windowMs;
    if (input.nowMs >= endsAt) continue;
    nextChangeAtMs = Math.min(nextChangeAtMs ?? Infinity, endsAt);
    const peer = input.healthyPeers.find((p) => {
      const c = checkPeer(p);
      // A peer that is itself a managed VIP would send the traffic straight back into these rules.
      return c.ok && c.peer === p && c.family === v.family && !managed.has(p);
    });
    if (peer === undefined) unserved.push({ vip: v.vip, reason: `no healthy IPv${v.family} peer: new connections take the load balancer path` });
    else redirects.push({ vip: v.vip, family: v.family, to: peer });
  }
  return { downSince, redirects, unserved, nextChangeAtMs };
}
