// The one VIP grammar shared by `kubeward watch` (what it publishes) and `kubeward routes` (what it
// reads and turns into rules): a unicast IPv4 or IPv6 address that a load balancer can own. Every
// VIP becomes a file name and a packet rule, so anything else is refused here, never escaped later.
import { formatIp, parseCidr, parseIp, type IpAddress } from '../base/ip.ts';
import { Refused, textField } from '../config/fields.ts';

export type VipCheck = { ok: true; vip: string; family: 4 | 6 } | { ok: false; reason: string };

/**
 * Checks one VIP and returns its canonical form (IPv6 compressed, lower-case: the form state-file
 * names use). Never throws. Refused: zone ids (`fe80::1%eth0`: a name with `%` is not portable and
 * URL parsers throw on it), unspecified, link-local (which includes the cloud metadata address
 * 169.254.169.254), multicast, broadcast, and IPv4-mapped IPv6 (its family is ambiguous: an `ip6`
 * rule never matches the IPv4 packets it stands for). Loopback is allowed: no load balancer owns
 * it, but a rule for it is harmless and local test set-ups use it (a name resolving to 127.0.0.1).
 */
export function checkVip(text: string): VipCheck {
  if (typeof text !== 'string' || text.length === 0 || text.length > 45) return { ok: false, reason: 'is not an IPv4 or IPv6 address' };
  if (text.includes('%')) return { ok: false, reason: 'has a zone id (%...); a VIP is a global address' };
  const ip = parseIp(text);
  if (ip === undefined) return { ok: false, reason: 'is not an IPv4 or IPv6 address' };
  return ip.family === 4 ? checkV4(ip) : checkV6(ip);
}

function checkV4(ip: IpAddress): VipCheck {
  const a = Number(ip.value >> 24n);
  const b = Number((ip.value >> 16n) & 255n);
  if (a === 0) return { ok: false, reason: 'is in 0.0.0.0/8 ("this network"), not an address a load balancer can own' };
  if (a === 169 && b === 254) return { ok: false, reason: 'is link-local (169.254.0.0/16, where the cloud metadata server lives)' };
  if (a >= 224 && a <= 239) return { ok: false, reason: 'is a multicast address' };
  if (a >= 240) return { ok: false, reason: 'is reserved or broadcast (240.0.0.0/4)' };
  return { ok: true, vip: formatIp(ip), family: 4 };
}

function checkV6(ip: IpAddress): VipCheck {
  const canonical = formatIp(ip);
  if (ip.value === 0n) return { ok: false, reason: 'is the unspecified address' };
  // Textual, as before: it also refuses the rest of ::ffff:0:0/80 written this way (::/8 is reserved anyway).
  if (canonical.startsWith('::ffff:')) return { ok: false, reason: 'is an IPv4-mapped address; give the IPv4 address itself' };
  const first = Number(ip.value >> 112n);
  if ((first & 0xff00) === 0xff00) return { ok: false, reason: 'is a multicast address' };
  if ((first & 0xffc0) === 0xfe80) return { ok: false, reason: 'is link-local (fe80::/10)' };
  return { ok: true, vip: canonical, family: 6 };
}

/** The canonical VIP, or undefined for anything checkVip refuses. */
export function canonicalVip(text: string): string | undefined {
  const r = checkVip(text);
  return r.ok ? r.vip : undefined;
}

/** A config field (flag or YAML): a VIP, turned into its canonical form. */
export const vipAddress = textField((text): string | Refused => {
  const r = checkVip(text);
  return r.ok ? r.vip : new Refused(`"${printable(text)}" ${r.reason}; give the load balancer's unicast address such as 10.0.0.2`);
}, 'expected an IP address');

/** A CIDR such as 35.191.0.0/16: an address without zone id and a prefix length within its family. */
export function checkCidr(text: string): { ok: true; cidr: string } | { ok: false } {
  if (typeof text !== 'string' || text.length > 50) return { ok: false };
  if (!/^[0-9A-Fa-f.:]+\/\d{1,3}$/.test(text)) return { ok: false };
  const c = parseCidr(text);
  // The address is kept as written (canonical spelling), host bits included: the rule matches what was asked for.
  return c ? { ok: true, cidr: `${formatIp({ family: c.family, value: c.address })}/${c.prefix}` } : { ok: false };
}

export const cidrField = textField((text): string | Refused => {
  const r = checkCidr(text);
  return r.ok ? r.cidr : new Refused(`"${printable(text)}" is not a CIDR such as 35.191.0.0/16 (no zone ids)`);
}, 'expected a CIDR such as 35.191.0.0/16');

/** Input echoed in a message: bounded, with control characters made visible, so it stays one line. */
export function printable(text: string): string {
  const s = JSON.stringify(String(text).slice(0, 80)).slice(1, -1);
  return String(text).length > 80 ? `${s}...` : s;
}
