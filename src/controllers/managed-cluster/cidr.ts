// IPv4/IPv6 addresses and prefixes as numbers, for "does this route lie inside the cluster CIDR" (pure).

export interface IpValue {
  family: 4 | 6;
  value: bigint;
}

/** A prefix with its host bits cleared: 100.100.1.7/24 becomes 100.100.1.0/24. */
export interface Cidr {
  family: 4 | 6;
  base: bigint;
  prefix: number;
}

const bitsOf = (family: 4 | 6): number => (family === 4 ? 32 : 128);

function parseIpv4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
    v = (v << 8n) | BigInt(Number(p));
  }
  return v;
}

function parseIpv6(text: string): bigint | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (s: string): string[] => (s === '' ? [] : s.split(':'));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if ((halves.length === 2 && missing < 1) || (halves.length === 1 && missing !== 0)) return undefined;
  let v = 0n;
  for (const g of [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail]) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    v = (v << 16n) | BigInt(parseInt(g, 16));
  }
  return v;
}

export function parseIp(text: string): IpValue | undefined {
  if (text.includes(':')) {
    const v = parseIpv6(text);
    return v === undefined ? undefined : { family: 6, value: v };
  }
  const v = parseIpv4(text);
  return v === undefined ? undefined : { family: 4, value: v };
}

/** "a.b.c.d/n" or "x::/n"; undefined for anything else, a bare address included. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const ip = parseIp(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (!ip || !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  const bits = bitsOf(ip.family);
  if (prefix > bits) return undefined;
  const hostBits = BigInt(bits - prefix);
  return { family: ip.family, base: (ip.value >> hostBits) << hostBits, prefix };
}

/** Whether the whole of inner (its first and last address) lies inside outer. */
export function cidrWithin(inner: Cidr, outer: Cidr): boolean {
  if (inner.family !== outer.family || inner.prefix < outer.prefix) return false;
  const shift = BigInt(bitsOf(outer.family) - outer.prefix);
  return inner.base >> shift === outer.base >> shift;
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

/** Canonical form of an address so "10.0.0.1" and "fe80::1" compare by value; unparsable text is kept. */
export function normalizeIp(text: string): string {
  const ip = parseIp(text);
  return ip ? `${ip.family}:${ip.value.toString(16)}` : text;
}
