// The one VIP grammar shared by `kubeward watch` (what it publishes) and `kubeward routes` (what it
// reads and turns into rules): a unicast IPv4 or IPv6 address that a load balancer can own. Every
// VIP becomes a file name and a packet rule, so anything else is refused here, never escaped later.
import { isIP } from 'node:net';
import { Refused, textField } from '../config/fields.ts';

export type VipCheck = { ok: true; vip: string; family: 4 | 6 } | { ok: false; reason: string };

/** Strict textual IPv4: four decimal octets, no leading zeros (isIP alone accepts nothing looser). */
const V4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

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
  const family = isIP(text);
  if (family === 4) return checkV4(text);
  if (family === 6) return checkV6(text);
  return { ok: false, reason: 'is not an IPv4 or IPv6 address' };
}

function checkV4(text: string): VipCheck {
  if (!V4.test(text)) return { ok: false, reason: 'is not an IPv4 address in dotted decimal' };
  const [a, b] = text.split('.').map(Number) as [number, number];
  if (a === 0) return { ok: false, reason: 'is in 0.0.0.0/8 ("this network"), not an address a load balancer can own' };
  if (a === 169 && b === 254) return { ok: false, reason: 'is link-local (169.254.0.0/16, where the cloud metadata server lives)' };
  if (a >= 224 && a <= 239) return { ok: false, reason: 'is a multicast address' };
  if (a >= 240) return { ok: false, reason: 'is reserved or broadcast (240.0.0.0/4)' };
  return { ok: true, vip: text, family: 4 };
}

function checkV6(text: string): VipCheck {
  let canonical: string;
  try {
    canonical = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  } catch {
    return { ok: false, reason: 'is not an IPv6 address' };
  }
  if (canonical === '::') return { ok: false, reason: 'is the unspecified address' };
  if (canonical.startsWith('::ffff:')) return { ok: false, reason: 'is an IPv4-mapped address; give the IPv4 address itself' };
  const first = parseInt(canonical.split(':')[0] || '0', 16);
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
export const vipAddress = textField(
  (text): string | Refused => {
    const r = checkVip(text);
    return r.ok ? r.vip : new Refused(`"${printable(text)}" ${r.reason}; give the load balancer's unicast address such as 10.0.0.2`);
  },
  'expected an IP address',
);

/** A CIDR such as 35.191.0.0/16: an address without zone id and a prefix length within its family. */
export function checkCidr(text: string): { ok: true; cidr: string } | { ok: false } {
  if (typeof text !== 'string' || text.length > 50) return { ok: false };
  const m = /^([0-9A-Fa-f.:]+)\/(\d{1,3})$/.exec(text);
  if (!m) return { ok: false };
  const fam = isIP(m[1]!);
  if (fam === 0 || (fam === 4 && !V4.test(m[1]!))) return { ok: false };
  const len = Number(m[2]);
  if (len > (fam === 4 ? 32 : 128)) return { ok: false };
  const addr = fam === 6 ? new URL(`http://[${m[1]}]/`).hostname.slice(1, -1) : m[1]!;
  return { ok: true, cidr: `${addr}/${len}` };
}

export const cidrField = textField(
  (text): string | Refused => {
    const r = checkCidr(text);
    return r.ok ? r.cidr : new Refused(`"${printable(text)}" is not a CIDR such as 35.191.0.0/16 (no zone ids)`);
  },
  'expected a CIDR such as 35.191.0.0/16',
);

/** Input echoed in a message: bounded, with control characters made visible, so it stays one line. */
export function printable(text: string): string {
  const s = JSON.stringify(String(text).slice(0, 80)).slice(1, -1);
  return String(text).length > 80 ? `${s}...` : s;
}
