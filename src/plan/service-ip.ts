// The first address of the service range: the ClusterIP of the `kubernetes` Service, which
// in-cluster clients dial and which must therefore be in the apiserver certificate.
import { formatIp, parseCidr } from '../base/ip.ts';

/** "10.233.0.0/18" → "10.233.0.1"; undefined when the text is not a CIDR with room for a service address. */
export function firstServiceIp(cidr: string): string | undefined {
  const c = parseCidr(cidr.trim());
  if (c === undefined || c.prefix > (c.family === 4 ? 30 : 126)) return undefined;
  return formatIp({ family: c.family, value: c.base + 1n });
}
