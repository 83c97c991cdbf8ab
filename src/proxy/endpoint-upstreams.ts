// The apiservers that the `default/kubernetes` EndpointSlices (discovery.k8s.io v1 or v1beta1,
// same shape for what is read here) or the `kubernetes` Endpoints object list. Pure.
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
 * Ready endpoints of the slices that belong to the `kubernetes` Service, on the port named https
 * (or the only TCP port), sorted and de-duplicated. A ready condition that is missing counts as
 * ready (the API's own rule). FQDN slices are skipped: the proxy dials addresses.
 */
export function upstreamsFromEndpointSlices(slices: readonly EndpointSliceLike[]): HostPort[] {
  const out: HostPort[] = [];
  for (const s of slices) {
    if (s.metadata.labels?.[SERVICE_NAME_LABEL] !== 'kubernetes') continue;
    if (s.addressType !== 'IPv4' && s.addressType !== 'IPv6') continue;
    const port = httpsPort(s.ports ?? []);
    if (port === undefined) continue;
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      for (const host of e.addresses ?? []) out.push({ host, port });
    }
  }
  return sortUnique(out);
}

/** Ready addresses of the `kubernetes` Endpoints object (notReadyAddresses are left out). */
export function upstreamsFromEndpoints(objects: readonly EndpointsLike[]): HostPort[] {
  const out: HostPort[] = [];
  for (const ep of objects) {
    if (ep.metadata.name !== 'kubernetes') continue;
    for (const subset of ep.subsets ?? []) {
      const port = httpsPort(subset.ports ?? []);
      if (port === undefined) continue;
      for (const a of subset.addresses ?? []) out.push({ host: a.ip, port });
    }
  }
  return sortUnique(out);
}

function httpsPort(ports: readonly { name?: string | null; port?: number | null; protocol?: string | null }[]): number | undefined {
  const tcp = ports.filter((p) => (p.protocol ?? 'TCP') === 'TCP' && typeof p.port === 'number');
  const named = tcp.find((p) => p.name === 'https') ?? (tcp.length === 1 ? tcp[0] : undefined);
  return named?.port ?? undefined;
}

function sortUnique(list: HostPort[]): HostPort[] {
  const byKey = new Map(list.map((u) => [`${u.host}|${u.port}`, u]));
  return [...byKey.values()].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : a.port - b.port));
}
