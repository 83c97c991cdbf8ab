// The emulator's view of addresses: the one grammar in src/base/ip.ts, plus what Neutron does on
// top of it (a bare address where a prefix goes means that one address; ports get hosts of a subnet).
import { cidrContains as contains, formatIp, ipBits, parseIp, parsePrefixOrAddress, type Cidr } from '../../src/base/ip.ts';

export { formatCidr } from '../../src/base/ip.ts';
export type { Cidr } from '../../src/base/ip.ts';

/** Parses "a.b.c.d/n", or a bare address as its /32 (/128); undefined when it is neither. */
export const parseCidr = (text: string): Cidr | undefined => parsePrefixOrAddress(text);

export function cidrContains(c: Cidr, ip: string): boolean {
  const a = parseIp(ip);
  return a !== undefined && contains(c, a);
}

/** Hosts of a subnet usable for ports: skips the network address, the gateway and (IPv4) broadcast. */
export function* hostAddresses(cidr: Cidr): Generator<string> {
  const size = 1n << BigInt(ipBits(cidr.family) - cidr.prefix);
  const last = cidr.family === 4 ? size - 2n : size - 1n;
  for (let i = 2n; i <= last && i < 65536n; i++) yield formatIp({ family: cidr.family, value: cidr.base + i });
}
