// Whether an address may be the target of a down-peer `dnat` rule (pure; the same grammar as a VIP
// in src/watch/vip-address.ts, minus loopback). Kept free of config imports so the rule builders can
// check every target again right before it becomes a rule.
import { formatIp, parseIp } from '../base/ip.ts';

export type PeerCheck = { ok: true; peer: string; family: 4 | 6 } | { ok: false; reason: string };

/**
 * A unicast address of another host, in canonical form. Refused: zone ids, loopback (127.0.0.0/8,
 * ::1: this node, whose apiserver is the one that is down), unspecified, link-local (the metadata
 * server lives there), multicast, 240.0.0.0/4 and broadcast, IPv4-mapped IPv6. Never throws.
 */
export function checkPeer(text: string): PeerCheck {
  if (typeof text !== 'string' || text.length === 0 || text.length > 45) return { ok: false, reason: 'is not an IPv4 or IPv6 address' };
  if (text.includes('%')) return { ok: false, reason: 'has a zone id (%...); give a global address' };
  const ip = parseIp(text);
  if (ip === undefined) return { ok: false, reason: 'is not an IPv4 or IPv6 address' };
  const peer = formatIp(ip);
  if (ip.family === 4) {
    const a = Number(ip.value >> 24n);
    const b = Number((ip.value >> 16n) & 255n);
    if (a === 0) return { ok: false, reason: 'is in 0.0.0.0/8 ("this network")' };
    if (a === 127) return { ok: false, reason: 'is a loopback address: this node, not a peer' };
    if (a === 169 && b === 254) return { ok: false, reason: 'is link-local (169.254.0.0/16, where the cloud metadata server lives)' };
    if (a >= 224 && a <= 239) return { ok: false, reason: 'is a multicast address' };
    if (a >= 240) return { ok: false, reason: 'is reserved or broadcast (240.0.0.0/4)' };
    return { ok: true, peer, family: 4 };
  }
  if (ip.value === 0n) return { ok: false, reason: 'is the unspecified address' };
  if (ip.value === 1n) return { ok: false, reason: 'is a loopback address: this node, not a peer' };
  if (peer.startsWith('::ffff:')) return { ok: false, reason: 'is an IPv4-mapped address; give the IPv4 address itself' };
  const first = Number(ip.value >> 112n);
  if ((first & 0xff00) === 0xff00) return { ok: false, reason: 'is a multicast address' };
  if ((first & 0xffc0) === 0xfe80) return { ok: false, reason: 'is link-local (fe80::/10)' };
  return { ok: true, peer, family: 6 };
}
