// Strict parsing of the GCP metadata server's answers (pure). Garbage is never a VIP: an answer
// that is not exactly the expected shape fails the whole read, and the caller keeps the last good set.
import { KubewardError } from '../base/errors.ts';
import { canonicalIp } from '../base/ip.ts';
import { checkVip } from '../watch/vip-address.ts';

export interface ForwardedIps {
  /** Canonical addresses, sorted, without duplicates. */
  vips: string[];
  /** Forwarded ranges (shorter than one address) that are not used as VIPs; give --vip for them. */
  ranges: string[];
}

/** A directory listing: one entry per line, each "N/" (dirs) or "N" (leaves). */
export function parseIndexList(text: string, kind: 'dirs' | 'leaves'): number[] {
  const shape = kind === 'dirs' ? /^(\d{1,4})\/$/ : /^(\d{1,4})$/;
  const out: number[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const m = shape.exec(line);
    if (!m) throw new KubewardError('E_HTTP', `metadata listing has an unexpected line ${JSON.stringify(line.slice(0, 60))}`);
    out.push(Number(m[1]));
  }
  return out;
}

export type ForwardedValue = { vip: string } | { range: string };

/** One forwarded-ips or forwarded-ipv6s value: an address, optionally with a full-length prefix. */
export function parseForwardedValue(text: string, family: 4 | 6): ForwardedValue {
  const value = text.trim();
  const m = /^([0-9A-Fa-f.:]+)(?:\/(\d{1,3}))?$/.exec(value);
  const ip = m ? canonicalIp(m[1]!) : undefined;
  const fam = ip === undefined ? 0 : ip.includes(':') ? 6 : 4;
  if (!m || ip === undefined || fam !== family) {
    throw new KubewardError('E_HTTP', `metadata value ${JSON.stringify(value.slice(0, 60))} is not an IPv${family} address`);
  }
  const full = family === 4 ? 32 : 128;
  const prefix = m[2] === undefined ? full : Number(m[2]);
  if (prefix > full) throw new KubewardError('E_HTTP', `metadata value ${value} has a bad prefix length`);
  if (prefix !== full) return { range: `${ip}/${prefix}` };
  // Every VIP becomes a rule: the metadata server gets no more trust than a flag.
  const check = checkVip(ip);
  if (!check.ok) throw new KubewardError('E_HTTP', `metadata value ${value} ${check.reason}`);
  return { vip: check.vip };
}

export function collectForwarded(values: readonly ForwardedValue[]): ForwardedIps {
  const vips = new Set<string>();
  const ranges = new Set<string>();
  for (const v of values) {
    if ('vip' in v) vips.add(v.vip);
    else ranges.add(v.range);
  }
  return { vips: [...vips].sort(), ranges: [...ranges].sort() };
}
