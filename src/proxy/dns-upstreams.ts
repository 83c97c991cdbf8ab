// Upstreams given as DNS names (--upstream-dns NAME:PORT), re-resolved on a schedule, so a control
// plane whose apiservers get new addresses one by one (rke2 #6208, k3s #11349) stays reachable
// after every address the proxy started with is gone. Pure: what to keep from each resolution.
import { formatHostPort, type HostPort } from '../config/fields.ts';

export interface NameAndPort {
  name: string;
  port: number;
}

/**
 * The addresses to serve from a new resolution. The last good set is kept whole when the
 * resolution gave nothing (every name failed or answered empty: a DNS outage must not empty the
 * pool). An address that left the answer stays while it is up and any new address has not passed
 * its checks yet: the last known good set is kept until its replacement is proven.
 */
export function planResolved(previous: readonly HostPort[], resolved: readonly HostPort[] | undefined, isUp: (key: string) => boolean): HostPort[] {
  if (!resolved || resolved.length === 0) return [...previous];
  const wanted = new Map(resolved.map((u) => [formatHostPort(u), u]));
  const replacementsProven = [...wanted.keys()].every(isUp);
  const kept = [...wanted.values()];
  if (!replacementsProven) for (const u of previous) if (!wanted.has(formatHostPort(u)) && isUp(formatHostPort(u))) kept.push(u);
  return kept;
}

/** Joins per-name answers (undefined: that name failed, keep its previous addresses) into one list without duplicates. */
export function joinAnswers(
  names: readonly NameAndPort[],
  answers: readonly (string[] | undefined)[],
  previous: ReadonlyMap<string, readonly HostPort[]>,
): { list: HostPort[]; byName: Map<string, HostPort[]> } {
  const byName = new Map<string, HostPort[]>();
  const seen = new Set<string>();
  const list: HostPort[] = [];
  for (const [i, n] of names.entries()) {
    const id = `${n.name}:${n.port}`;
    const answer = answers[i];
    const hosts = answer && answer.length > 0 ? answer.map((host) => ({ host, port: n.port })) : [...(previous.get(id) ?? [])];
    byName.set(id, hosts);
    for (const hp of hosts) {
      const key = formatHostPort(hp);
      if (seen.has(key)) continue;
      seen.add(key);
      list.push(hp);
    }
  }
  return { list, byName };
}
