// The one IP and CIDR grammar (pure). Every module that reads an address or a prefix from a flag, a
// file, `ip -j route`, Neutron or a certificate goes through here, so that "10.0.0.1" means the
// same thing to routes, routegc, flight, plan and the emulator.
//
// Accepted: IPv4 in dotted decimal with four octets and no leading zeros (what Node's `isIP`
// accepts: "010.0.0.1" is refused because inet_aton would read it as octal), and IPv6 in any RFC
// 4291 §2.2 text form, an embedded dotted IPv4 tail included. Refused: zone ids ("fe80::1%eth0":
// not portable, no file name or rule may carry one), surrounding white space, anything else.
//
// Formatting: IPv4 as dotted decimal; IPv6 as RFC 5952 §4 (lower case, no leading zeros, the first
// longest run of two or more zero groups as "::"), with the last 32 bits always in hex. That is the
// form the WHATWG URL parser serialises to, which state-file names used before this module existed
// (`::ffff:1.2.3.4` is written `::ffff:102:304`), so existing file names keep their spelling.

export type IpFamily = 4 | 6;

export interface IpAddress {
  family: IpFamily;
  value: bigint;
}

/** A prefix. `base` has the host bits cleared; `address` is the address as written (host bits kept). */
export interface Cidr {
  family: IpFamily;
  base: bigint;
  prefix: number;
  address: bigint;
}

export const ipBits = (family: IpFamily): number => (family === 4 ? 32 : 128);

const OCTET = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const GROUP = /^[0-9a-fA-F]{1,4}$/;

function parseV4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    if (!OCTET.test(p)) return undefined;
    v = (v << 8n) | BigInt(Number(p));
  }
  return v;
}

function groupsOf(text: string): bigint[] | undefined {
  if (text === '') return [];
  const out: bigint[] = [];
  const parts = text.split(':');
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (i === parts.length - 1 && p.includes('.')) {
      const v4 = parseV4(p);
      if (v4 === undefined) return undefined;
      out.push(v4 >> 16n, v4 & 0xffffn);
    } else if (GROUP.test(p)) {
      out.push(BigInt(parseInt(p, 16)));
    } else {
      return undefined;
    }
  }
  return out;
}

function parseV6(text: string): bigint | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = groupsOf(halves[0]!);
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (head === undefined || tail === undefined) return undefined;
  // An embedded IPv4 tail may only end the address.
  if (halves.length === 2 && halves[0]!.includes('.')) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  let v = 0n;
  for (const g of [...head, ...Array<bigint>(halves.length === 2 ? missing : 0).fill(0n), ...tail]) v = (v << 16n) | g;
  return v;
}

/** Parses one address; undefined for anything outside the grammar above. Never throws. */
export function parseIp(text: string): IpAddress | undefined {
  if (typeof text !== 'string' || text.length > 45) return undefined;
  if (text.includes(':')) {
    const v = parseV6(text);
    return v === undefined ? undefined : { family: 6, value: v };
  }
  const v = parseV4(text);
  return v === undefined ? undefined : { family: 4, value: v };
}

export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return [24n, 16n, 8n, 0n].map((s) => String((ip.value >> s) & 255n)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => Number((ip.value >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = { start: -1, len: 1 };
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len) best = { start: i, len: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.start < 0) return hex.join(':');
  return `${hex.slice(0, best.start).join(':')}::${hex.slice(best.start + best.len).join(':')}`;
}

/** The canonical text of an address (see the header), or undefined when it is none. Never throws. */
export function canonicalIp(text: string): string | undefined {
  const ip = parseIp(text);
  return ip ? formatIp(ip) : undefined;
}

/** A key under which two spellings of one address compare equal; text that is no address is its own key. */
export function ipKey(text: string): string {
  const ip = parseIp(text);
  return ip ? `${ip.family}:${ip.value.toString(16)}` : text;
}

const hostMask = (family: IpFamily, prefix: number): bigint => (1n << BigInt(ipBits(family) - prefix)) - 1n;

/** "a.b.c.d/n" or "x::/n" with n within the family; undefined for anything else, a bare address included. */
export function parseCidr(text: string): Cidr | undefined {
  if (typeof text !== 'string') return undefined;
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const ip = parseIp(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (!ip || !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > ipBits(ip.family)) return undefined;
  return { family: ip.family, base: ip.value & ~hostMask(ip.family, prefix), prefix, address: ip.value };
}

/** A prefix, or a bare address as the prefix of that one address (as `ip route` prints host routes). */
export function parsePrefixOrAddress(text: string): Cidr | undefined {
  if (typeof text === 'string' && !text.includes('/')) {
    const ip = parseIp(text);
    return ip ? { family: ip.family, base: ip.value, prefix: ipBits(ip.family), address: ip.value } : undefined;
  }
  return parseCidr(text);
}

/** The network form, host bits cleared: "10.0.0.7/24" → "10.0.0.0/24". */
export function formatCidr(c: Cidr): string {
  return `${formatIp({ family: c.family, value: c.base })}/${c.prefix}`;
}

export function cidrContains(c: Cidr, ip: IpAddress): boolean {
  return ip.family === c.family && (ip.value & ~hostMask(c.family, c.prefix)) === c.base;
}

/** Whether the whole of inner (its first and last address) lies inside outer. */
export function cidrWithin(inner: Cidr, outer: Cidr): boolean {
  return inner.family === outer.family && inner.prefix >= outer.prefix && cidrContains(outer, { family: inner.family, value: inner.base });
}

export function sameCidr(a: Cidr, b: Cidr): boolean {
  return a.family === b.family && a.prefix === b.prefix && a.base === b.base;
}

/** Compares two prefixes as text, tolerating host bits and IPv6 spellings; unparsable ones compare as strings. */
export function sameCidrText(a: string, b: string): boolean {
  const ca = parseCidr(a);
  const cb = parseCidr(b);
  return ca && cb ? sameCidr(ca, cb) : a === b;
}
