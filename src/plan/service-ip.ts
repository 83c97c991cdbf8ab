// The first address of the service range: the ClusterIP of the `kubernetes` Service, which
// in-cluster clients dial and which must therefore be in the apiserver certificate.
import { isIP } from 'node:net';

/** "10.233.0.0/18" → "10.233.0.1"; undefined when the text is not a CIDR. */
export function firstServiceIp(cidr: string): string | undefined {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(cidr.trim());
  if (!m) return undefined;
  const [, addr, bitsText] = m as unknown as [string, string, string];
  const bits = Number(bitsText);
  const family = isIP(addr);
  if (family === 4 && bits <= 30) return formatV4((parseV4(addr) & maskV4(bits)) + 1);
  if (family === 6 && bits <= 126) return formatV6((parseV6(addr) & maskV6(bits)) + 1n);
  return undefined;
}

function parseV4(s: string): number {
  return s.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

function maskV4(bits: number): number {
  return bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
}

function formatV4(n: number): string {
  const u = n >>> 0;
  return [24, 16, 8, 0].map((shift) => (u >>> shift) & 255).join('.');
}

function parseV6(s: string): bigint {
  const [head, tail] = s.includes('::') ? s.split('::') as [string, string] : [s, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((acc, g) => (acc << 16n) + BigInt(parseInt(g || '0', 16)), 0n);
}

function maskV6(bits: number): bigint {
  const all = (1n << 128n) - 1n;
  return (all << BigInt(128 - bits)) & all;
}

/** RFC 5952 form: lower case, the longest run of zero groups as "::". */
export function formatV6(n: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = { start: -1, len: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len && j - i > 1) best = { start: i, len: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.start < 0) return hex.join(':');
  return `${hex.slice(0, best.start).join(':')}::${hex.slice(best.start + best.len).join(':')}`;
}

/** An address in the form certificates and comparisons use (IPv6 compressed, lower case). */
export function canonicalIp(s: string): string {
  const family = isIP(s);
  // Mixed notation (::ffff:10.0.0.1) is left as written; inventories rarely use it.
  if (family === 6 && !s.includes('.')) return formatV6(parseV6(s.toLowerCase()));
  return s;
}
