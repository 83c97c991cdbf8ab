// The apiservers that the `default/kubernetes` EndpointSlices (discovery.k8s.io v1 or v1beta1,
// same shape for what is read here) or the `kubernetes` Endpoints object list. Pure.
import { parseIp, formatIp, type IpFamily } from '../base/ip.ts';
import type { HostPort } from '../config/fields.ts';

export interface EndpointSliceLike {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  addressType?: string;
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean | null } }[] | null;
  ports?: { name?: string | null; port?: number | null; protocol?: string | null }[] | null;
}

export interface EndpointsLike {
  metadata: { name: string; namespace?: string };
  subsets?: { addresses?: { ip: string }[] | null; ports?: { name?: string; port: number; protocol?: string }[] | null }[] | null;
}

/** The label that ties a slice to its Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/**
 * What the endpoints list: the upstreams to dial, and the entries left out because they are not an
 * address the proxy may dial (a host name, an address with a zone id, one of the other family, a
 * port outside 1-65535), as they were written, for the log.
 */
export interface DiscoveredUpstreams {
  upstreams: HostPort[];
  rejected: string[];
}

/**
 * Ready endpoints of the slices that belong to the `kubernetes` Service, on the port named https
 * (or the only TCP port), sorted and de-duplicated. A ready condition that is missing counts as
 * ready (the API's own rule). FQDN slices are skipped: the proxy dials addresses. An address is
 * dialled only in its canonical form and only if it is of the slice's addressType.
 */
export function upstreamsFromEndpointSlices(slices: readonly EndpointSliceLike[]): DiscoveredUpstreams {
  const found = new Found();
  for (const s of slices) {
    if (s.metadata.labels?.[SERVICE_NAME_LABEL] !== 'kubernetes') continue;
    if (s.addressType !== 'IPv4' && s.addressType !== 'IPv6') continue;
    const port = httpsPort(s.ports ?? [], found);
    if (port === undefined) continue;
    const family = s.addressType === 'IPv4' ? 4 : 6;
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      for (const host of e.addresses ?? []) found.add(host, port, family);
    }
  }
  return found.result();
}

/** Ready addresses of the `kubernetes` Endpoints object (notReadyAddresses are left out). */
export function upstreamsFromEndpoints(objects: readonly EndpointsLike[]): DiscoveredUpstreams {
  const found = new Found();
  for (const ep of objects) {
    if (ep.metadata.name !== 'kubernetes') continue;
    for (const subset of ep.subsets ?? []) {
      const port = httpsPort(subset.ports ?? [], found);
      if (port === undefined) continue;
      for (const a of subset.addresses ?? []) found.add(a?.ip, port, undefined);
    }
  }
  return found.result();
}

/** Collects the dialable entries and the rejected ones. */
class Found {
  readonly #byKey = new Map<string, HostPort>();
  readonly #rejected: string[] = [];

  add(host: unknown, port: number, family: IpFamily | undefined): void {
    const ip = typeof host === 'string' ? parseIp(host) : undefined;
    if (!ip || (family !== undefined && ip.family !== family)) {
      this.reject(`${String(host)}`);
      return;
    }
    const canonical = formatIp(ip);
    this.#byKey.set(`${canonical}|${port}`, { host: canonical, port });
  }

  reject(what: string): void {
    // Bounded: a huge or hostile object must not become a huge log line.
    if (this.#rejected.length < 10) this.#rejected.push(what.length > 64 ? `${what.slice(0, 64)}…` : what);
  }

  result(): DiscoveredUpstreams {
    const upstreams = [...this.#byKey.values()].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : a.port - b.port));
    return { upstreams, rejected: this.#rejected };
  }
}

function httpsPort(ports: readonly { name?: string | null; port?: number | null; protocol?: string | null }[], found: Found): number | undefined {
  const tcp = ports.filter((p) => (p.protocol ?? 'TCP') === 'TCP' && typeof p.port === 'number');
  const named = tcp.find((p) => p.name === 'https') ?? (tcp.length === 1 ? tcp[0] : undefined);
  const port = named?.port ?? undefined;
  if (port === undefined) return undefined;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    found.reject(`port ${port}`);
    return undefined;
  }
  return port;
}
