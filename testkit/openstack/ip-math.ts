// IPv4/IPv6 address and CIDR arithmetic for the emulator's validations and address allocation.
import { isIP } from 'node:net';

export interface Cidr {
  version: 4 | 6;
  /** Network address as a bigint. */
  base: bigint;
  prefix: number;
  /** The address as written (host bits may be set). */
  addr: bigint;
}

export function ipToBigInt(ip: string): bigint | undefined {
  const v = isIP(ip);
  if (v === 4) return ip.split('.').reduce((acc, o) => (acc << 8n) + BigInt(Number(o)), 0n);
  if (v !== 6) return undefined;
  const [head, tail] = ip.includes('::') ? ip.split('::') as [string, string] : [ip, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  if (t.at(-1)?.includes('.') || h.at(-1)?.includes('.')) return undefined; // embedded IPv4 forms: not needed here
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((acc, g) => (acc << 16n) + BigInt(parseInt(g || '0', 16)), 0n);
}

export function bigIntToIp(n: bigint, version: 4 | 6): string {
  if (version === 4) return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 255n)).join('.');
  const groups: string[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((n >> s) & 0xffffn).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

/** Parses "a.b.c.d/n"; undefined when not a CIDR at all. */
export function parseCidr(text: string): Cidr | undefined {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(text);
  const ipText = m ? m[1]! : text;
  const version = isIP(ipText);
  if (version !== 4 && version !== 6) return undefined;
  const bits = version === 4 ? 32 : 128;
  const prefix = m ? Number(m[2]) : bits;
  if (prefix > bits) return undefined;
  const addr = ipToBigInt(ipText)!;
  const mask = ((1n << BigInt(bits)) - 1n) ^ ((1n << BigInt(bits - prefix)) - 1n);
  return { version, base: addr & mask, prefix, addr };
}

export function formatCidr(c: Cidr): string {
  return `${bigIntToIp(c.base, c.version)}/${c.prefix}`;
}

export function cidrContains(c: Cidr, ip: string): boolean {
  const n = ipToBigInt(ip);
  if (n === undefined || isIP(ip) !== c.version) return false;
  const bits = c.version === 4 ? 32 : 128;
  return n >> BigInt(bits - c.prefix) === c.base >> BigInt(bits - c.prefix);
}

/** Hosts of a subnet usable for ports: skips the network address, the gateway and (IPv4) broadcast. */
export function* hostAddresses(cidr: Cidr): Generator<string> {
  const bits = cidr.version === 4 ? 32 : 128;
  const size = 1n << BigInt(bits - cidr.prefix);
  const last = cidr.version === 4 ? size - 2n : size - 1n;
  for (let i = 2n; i <= last && i < 65536n; i++) yield bigIntToIp(cidr.base + i, cidr.version);
}
