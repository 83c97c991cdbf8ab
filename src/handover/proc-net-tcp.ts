// Reads the listening TCP sockets of the network namespace from /proc/net/tcp and /proc/net/tcp6
// (pure parser). The format is the kernel's (net/ipv4/tcp_ipv4.c get_tcp4_sock, net/ipv6/tcp_ipv6.c
// get_tcp6_sock): "sl local_address rem_address st ... uid timeout inode", addresses as hex words
// in host byte order, the port as big-endian hex, st 0A for LISTEN.
import { isIPv4, isIPv6 } from 'node:net';

export interface ListeningSocket {
  /** Canonical address text (IPv6 compressed, lower case). */
  host: string;
  port: number;
  inode: number;
}

const LISTEN = '0A';

export function parseProcNetTcp(text: string, family: 4 | 6): ListeningSocket[] {
  const out: ListeningSocket[] = [];
  for (const line of text.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 10 || cols[3] !== LISTEN) continue;
    const m = /^([0-9A-Fa-f]+):([0-9A-Fa-f]{4})$/.exec(cols[1]!);
    const inode = Number(cols[9]);
    if (!m || !Number.isSafeInteger(inode)) continue;
    const host = decodeAddress(m[1]!, family);
    if (host === undefined) continue;
    out.push({ host, port: parseInt(m[2]!, 16), inode });
  }
  return out;
}

/** The kernel prints each 32-bit word of the address in host byte order (little-endian on x86 and arm64). */
export function decodeAddress(hex: string, family: 4 | 6): string | undefined {
  if (hex.length !== (family === 4 ? 8 : 32)) return undefined;
  const bytes: number[] = [];
  for (let w = 0; w < hex.length; w += 8) {
    const word = hex.slice(w, w + 8);
    for (let b = 6; b >= 0; b -= 2) bytes.push(parseInt(word.slice(b, b + 2), 16));
  }
  if (family === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return canonicalHost(groups.join(':'));
}

/** The inverse of decodeAddress, for tests and fixtures. */
export function encodeAddress(host: string): string {
  const bytes = isIPv4(host) ? host.split('.').map(Number) : expandIPv6(host);
  let hex = '';
  for (let w = 0; w < bytes.length; w += 4) {
    for (let b = 3; b >= 0; b--) hex += bytes[w + b]!.toString(16).padStart(2, '0').toUpperCase();
  }
  return hex;
}

/** IPv6 text in its shortest form (RFC 5952, as URL does it); IPv4 unchanged. */
export function canonicalHost(host: string): string {
  if (!isIPv6(host)) return host;
  return new URL(`http://[${host}]/`).hostname.slice(1, -1);
}

function expandIPv6(host: string): number[] {
  const [head, tail] = canonicalHost(host).split('::') as [string, string | undefined];
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.flatMap((g) => {
    const v = parseInt(g, 16);
    return [v >> 8, v & 0xff];
  });
}
