// The emulator's view of addresses: the one grammar in src/base/ip.ts, plus what Neutron does on
// top of it (a bare address where a prefix goes means that one address; ports get addresses from a
// subnet's allocation pools).
import { cidrContains as contains, formatCidr, formatIp, ipBits, parseIp, parsePrefixOrAddress, type Cidr } from '../../src/base/ip.ts';

export { formatCidr } from '../../src/base/ip.ts';
export type { Cidr } from '../../src/base/ip.ts';

/** Parses "a.b.c.d/n", or a bare address as its /32 (/128); undefined when it is neither. */
export const parseCidr = (text: string): Cidr | undefined => parsePrefixOrAddress(text);

export function cidrContains(c: Cidr, ip: string): boolean {
  const a = parseIp(ip);
  return a !== undefined && contains(c, a);
}

export interface AddressRange {
  start: string;
  end: string;
}

/** The first and last address a port may get: past the network address, before (IPv4) broadcast. */
function hostBounds(cidr: Cidr): [bigint, bigint] {
  const size = 1n << BigInt(ipBits(cidr.family) - cidr.prefix);
  return [cidr.base + 1n, cidr.base + (cidr.family === 4 ? size - 2n : size - 1n)];
}

/** Neutron's default pools: every host address of the subnet but the gateway's. */
export function defaultPools(cidr: Cidr, gateway: string | null): AddressRange[] {
  const [first, last] = hostBounds(cidr);
  const gw = gateway === null ? undefined : parseIp(gateway)?.value;
  const spans: [bigint, bigint][] =
    gw !== undefined && gw >= first && gw <= last
      ? [
          [first, gw - 1n],
          [gw + 1n, last],
        ]
      : [[first, last]];
  return spans
    .filter(([a, b]) => a <= b)
    .map(([a, b]) => ({ start: formatIp({ family: cidr.family, value: a }), end: formatIp({ family: cidr.family, value: b }) }));
}

/** Why a pool cannot belong to the subnet, or undefined when it can. */
export function poolProblem(cidr: Cidr, pool: AddressRange): string | undefined {
  const a = parseIp(pool.start);
  const b = parseIp(pool.end);
  if (!a || !b || a.family !== cidr.family || b.family !== cidr.family || a.value > b.value) return `${pool.start}-${pool.end} is not a range of addresses`;
  const [first, last] = hostBounds(cidr);
  if (a.value < first || b.value > last) return `The allocation pool ${pool.start}-${pool.end} spans beyond the subnet cidr ${formatCidr(cidr)}.`;
  return undefined;
}

export function rangeContains(range: AddressRange, ip: string): boolean {
  const [a, b, x] = [parseIp(range.start), parseIp(range.end), parseIp(ip)];
  return a !== undefined && b !== undefined && x !== undefined && x.family === a.family && x.value >= a.value && x.value <= b.value;
}

/** Addresses of the pools in order, at most `limit` of them, skipping those `used` holds. */
export function freeAddresses(pools: readonly AddressRange[], used: ReadonlySet<string>, limit: number): string[] {
  const out: string[] = [];
  for (const pool of pools) {
    const a = parseIp(pool.start)!;
    const b = parseIp(pool.end)!;
    for (let v = a.value; v <= b.value && out.length < limit; v++) {
      const ip = formatIp({ family: a.family, value: v });
      if (!used.has(ip)) out.push(ip);
    }
  }
  return out;
}
