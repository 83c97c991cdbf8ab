// Whether a server certificate serves the name or address clients dial, judged the way Go's
// crypto/x509 (client-go, kubelet) judges it: SANs only (no Common Name), one-label wildcards,
// IP targets against IP SANs only; plus validity dates and the chain result. Every failure says
// the fix. Pure: the certificate facts come from an adapter.
import { isIP } from 'node:net';
import { canonicalIp } from '../base/ip.ts';

export interface ServerCertFacts {
  subject: string;
  issuer: string;
  dnsNames: string[];
  ipAddresses: string[];
  notBefore: Date;
  notAfter: Date;
  /** Present when a CA was given: whether the chain verified, and the error code if not. */
  chain?: { verified: boolean; error?: string; caLabel: string };
}

export type FindingKind = 'covered' | 'not-covered' | 'expired' | 'not-yet-valid' | 'untrusted';

export interface Finding {
  kind: FindingKind;
  ok: boolean;
  message: string;
  fix?: string;
}

/** Go's x509 hostname matching: case-insensitive, trailing dot ignored, "*" only as a whole leftmost label. */
export function matchesDnsName(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase().replace(/\.$/, '');
  const h = host.toLowerCase().replace(/\.$/, '');
  if (p === h) return true;
  if (!p.startsWith('*.')) return false;
  const dot = h.indexOf('.');
  return dot > 0 && h.slice(dot + 1) === p.slice(2);
}

export function isCovered(cert: ServerCertFacts, target: string): boolean {
  if (isIP(target) !== 0) return cert.ipAddresses.some((ip) => (canonicalIp(ip) ?? ip) === (canonicalIp(target) ?? target));
  return cert.dnsNames.some((n) => matchesDnsName(n, target));
}

/** The error client-go prints for a name the certificate does not cover (crypto/x509 HostnameError). */
export function x509HostnameError(cert: ServerCertFacts, target: string): string {
  if (isIP(target) !== 0) {
    if (cert.ipAddresses.length === 0) return `x509: cannot validate certificate for ${target} because it doesn't contain any IP SANs`;
    return `x509: certificate is valid for ${cert.ipAddresses.join(', ')}, not ${target}`;
  }
  if (cert.dnsNames.length === 0) return `x509: certificate is not valid for any names, but wanted to match ${target}`;
  return `x509: certificate is valid for ${cert.dnsNames.join(', ')}, not ${target}`;
}

export const SAN_FIX =
  'kubespray: add it to supplementary_addresses_in_ssl_keys and re-run cluster.yml (it re-issues apiserver.crt when a SAN is missing); ' +
  'kubeadm: add it to apiServer.certSANs, move apiserver.crt and apiserver.key out of /etc/kubernetes/pki, run "kubeadm init phase certs apiserver --config <file>", and restart kube-apiserver';

export function coverageFinding(cert: ServerCertFacts, target: string): Finding {
  const kind = isIP(target) !== 0 ? 'IP' : 'DNS';
  if (isCovered(cert, target)) return { kind: 'covered', ok: true, message: `${target} is covered (${kind} SAN)` };
  return {
    kind: 'not-covered',
    ok: false,
    message: `${target} is not covered; clients get "${x509HostnameError(cert, target)}"`,
    fix: `add "${target}" to the apiserver certificate. ${SAN_FIX}`,
  };
}

export function validityFinding(cert: ServerCertFacts, now: Date): Finding {
  const days = (ms: number) => Math.floor(Math.abs(ms) / 86_400_000);
  if (now < cert.notBefore) {
    return {
      kind: 'not-yet-valid',
      ok: false,
      message: `not valid before ${cert.notBefore.toISOString()}`,
      fix: 'check the clock on this machine and on the server (NTP)',
    };
  }
  if (now > cert.notAfter) {
    return {
      kind: 'expired',
      ok: false,
      message: `expired at ${cert.notAfter.toISOString()} (${days(now.getTime() - cert.notAfter.getTime())} days ago); clients get "x509: certificate has expired or is not yet valid"`,
      fix: 'renew it: "kubeadm certs renew apiserver" on each control-plane node, then restart kube-apiserver (kubespray: run cluster.yml with force_certificate_regeneration=true)',
    };
  }
  return { kind: 'covered', ok: true, message: `valid until ${cert.notAfter.toISOString()} (${days(cert.notAfter.getTime() - now.getTime())} days left)` };
}

export function chainFinding(cert: ServerCertFacts): Finding | undefined {
  const chain = cert.chain;
  if (!chain) return undefined;
  if (chain.verified) return { kind: 'covered', ok: true, message: `chain verified against ${chain.caLabel}` };
  return {
    kind: 'untrusted',
    ok: false,
    message: `not signed by the CA in ${chain.caLabel} (${chain.error ?? 'verification failed'}); clients get "x509: certificate signed by unknown authority"`,
    fix: `check that ${chain.caLabel} is this cluster's CA (ca.crt in /etc/kubernetes/pki or /etc/kubernetes/ssl) and that the address reaches the intended apiserver, not another service`,
  };
}

/** All findings for one server and the names clients use, in the order they are printed. */
export function checkCertificate(cert: ServerCertFacts, targets: string[], now: Date): Finding[] {
  const findings: Finding[] = [validityFinding(cert, now)];
  const chain = chainFinding(cert);
  if (chain) findings.push(chain);
  // Expiry in the chain result repeats the validity finding; keep the one with the better fix.
  if (chain && !chain.ok && cert.chain?.error === 'CERT_HAS_EXPIRED') findings.pop();
  for (const t of targets) findings.push(coverageFinding(cert, t));
  return findings;
}
