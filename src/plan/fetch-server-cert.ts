// Adapter: a TLS handshake (no HTTP) to read the serving certificate, and, when a CA is given,
// whether its chain verifies. Never throws for network trouble: returns the reason instead.
import { connect, type PeerCertificate } from 'node:tls';
import { describeError } from '../base/errors.ts';
import type { ServerCertFacts } from './cert-coverage.ts';
import { canonicalIp } from '../base/ip.ts';

export interface FetchCertOptions {
  host: string;
  port: number;
  /** SNI to send; omitted for IP addresses, as TLS requires. */
  servername?: string;
  ca?: string;
  caLabel?: string;
  timeoutMs: number;
}

export type FetchCertResult = { ok: true; cert: ServerCertFacts } | { ok: false; reason: string };

export function fetchServerCert(opts: FetchCertOptions): Promise<FetchCertResult> {
  return new Promise((resolve) => {
    const sock = connect({
      host: opts.host,
      port: opts.port,
      servername: opts.servername,
      ca: opts.ca,
      // Verification is judged afterwards, so that an uncovered or untrusted certificate can be shown.
      rejectUnauthorized: false,
      checkServerIdentity: () => undefined,
    });
    const finish = (r: FetchCertResult) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => finish({ ok: false, reason: `no TLS handshake within ${opts.timeoutMs} ms` }), opts.timeoutMs);
    sock.once('secureConnect', () => {
      const peer = sock.getPeerCertificate(false);
      if (!peer || Object.keys(peer).length === 0) return finish({ ok: false, reason: 'the server sent no certificate' });
      const cert = factsOf(peer);
      if (opts.ca !== undefined) {
        cert.chain = {
          verified: sock.authorized,
          error: sock.authorizationError ? String(sock.authorizationError) : undefined,
          caLabel: opts.caLabel ?? 'the CA file',
        };
      }
      finish({ ok: true, cert });
    });
    sock.once('error', (err) => finish({ ok: false, reason: describeError(err) }));
  });
}

function factsOf(peer: PeerCertificate): ServerCertFacts {
  const { dnsNames, ipAddresses } = parseSubjectAltName(peer.subjectaltname ?? '');
  return {
    subject: formatName(peer.subject),
    issuer: formatName(peer.issuer),
    dnsNames,
    // OpenSSL spells IPv6 SANs out in full; Go prints them compressed, and so do we.
    ipAddresses: ipAddresses.map((ip) => canonicalIp(ip) ?? ip),
    notBefore: new Date(peer.valid_from),
    notAfter: new Date(peer.valid_to),
  };
}

/** Node's "DNS:a, IP Address:10.0.0.1" form; names with commas arrive JSON-quoted. */
export function parseSubjectAltName(text: string): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  const re = /(DNS|IP Address):("(?:[^"\\]|\\.)*"|[^,]*)(?:,\s*|$)/g;
  for (const m of text.matchAll(re)) {
    const value = m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : m[2]!.trim();
    if (m[1] === 'DNS') dnsNames.push(value);
    else ipAddresses.push(value);
  }
  return { dnsNames, ipAddresses };
}

function formatName(name: PeerCertificate['subject'] | undefined): string {
  if (!name) return '';
  return Object.entries(name)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('+') : String(v)}`)
    .join(', ');
}
