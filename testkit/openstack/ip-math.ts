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

/** A refused pool as Neutron answers it: the status, the fault's type and its message. */
export interface PoolFault {
  status: 400 | 409;
  type: string;
  message: string;
}

const badInput = (reason: string): PoolFault => ({ status: 400, type: 'HTTPBadRequest', message: `Invalid input for allocation_pools. Reason: ${reason}.` });
const invalidPool = (pool: AddressRange): PoolFault => ({
  status: 400,
  type: 'InvalidAllocationPool',
  message: `The allocation pool ${pool.start}-${pool.end} is not valid.`,
});

/**
 * The pools a subnet create asks for, checked in Neutron's order, or why they are refused: the API's
 * validator first (a list of {start, end} with valid addresses: neutron_lib's validate_ip_pools),
 * then each pool as a range (InvalidAllocationPool), inside the subnet (OutOfBoundsAllocationPool),
 * not overlapping another (OverlappingAllocationPools) and not holding the gateway
 * (neutron/db/ipam_backend_mixin.py: pools_to_ip_range, validate_allocation_pools,
 * validate_gw_out_of_pools).
 */
export function checkPools(asked: unknown, cidr: Cidr, gateway: string | null): AddressRange[] | PoolFault {
  if (!Array.isArray(asked)) return badInput(`Invalid data format for IP pool: '${JSON.stringify(asked)}'`);
  const pools: AddressRange[] = [];
  for (const p of asked as unknown[]) {
    const keys = p !== null && typeof p === 'object' && !Array.isArray(p) ? Object.keys(p).sort() : [];
    if (keys.length !== 2 || keys[0] !== 'end' || keys[1] !== 'start')
      return badInput(`Validation of dictionary's keys failed. Expected keys: {'end', 'start'} Provided keys: {${keys.map((k) => `'${k}'`).join(', ')}}`);
    const { start, end } = p as Record<string, unknown>;
    for (const ip of [start, end]) if (typeof ip !== 'string' || parseIp(ip) === undefined) return badInput(`'${String(ip)}' is not a valid IP address`);
    pools.push({ start: start as string, end: end as string });
  }
  const ranges = pools.map((pool) => ({ pool, a: parseIp(pool.start)!, b: parseIp(pool.end)! }));
  const invalid = ranges.find(({ a, b }) => a.family !== b.family || a.value > b.value);
  if (invalid) return invalidPool(invalid.pool);
  const [first, last] = hostBounds(cidr);
  for (const { pool, a, b } of ranges) {
    if (a.family !== cidr.family) return invalidPool(pool);
    if (a.value < first || b.value > last)
      return {
        status: 400,
        type: 'OutOfBoundsAllocationPool',
        message: `The allocation pool ${pool.start}-${pool.end} spans beyond the subnet cidr ${formatCidr(cidr)}.`,
      };
  }
  for (let i = 0; i < ranges.length; i++)
    for (let j = i + 1; j < ranges.length; j++) {
      const [x, y] = [ranges[i]!, ranges[j]!];
      if (x.a.value <= y.b.value && y.a.value <= x.b.value)
        return {
          status: 409,
          type: 'OverlappingAllocationPools',
          message: `Found overlapping allocation pools: ${x.pool.start}-${x.pool.end} and ${y.pool.start}-${y.pool.end} for subnet ${formatCidr(cidr)}.`,
        };
    }
  const gw = gateway === null ? undefined : pools.find((pool) => rangeContains(pool, gateway));
  if (gw)
    return { status: 409, type: 'GatewayConflictWithAllocationPools', message: `Gateway ip ${gateway} conflicts with allocation pool ${gw.start}-${gw.end}.` };
  return pools;
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
