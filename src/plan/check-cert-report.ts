// kubeward check-cert's report: which servers to check and what each must cover, and the text a
// person reads. Pure; the command (src/cli/check-cert.ts) fetches the certificates.
import { isIP } from 'node:net';
import { SAN_FIX, type Finding, type ServerCertFacts } from './cert-coverage.ts';
import { computeSans } from './apiserver-sans.ts';
import { controlPlaneHosts, type Inventory } from './inventory.ts';

export interface Server {
  label: string;
  host: string;
  port: number;
  /** Names and addresses clients dial on this server; all must be covered. */
  targets: string[];
  servername?: string;
}

export interface ServerReport {
  label: string;
  address: string;
  ok: boolean;
  cert?: ServerCertFacts;
  findings: Finding[];
}

/** The apiservers of an inventory (and its external load balancer), each with every planned SAN to cover. */
export function serversOfInventory(inv: Inventory): Server[] {
  const targets = computeSans(inv).map((s) => s.value);
  const servers: Server[] = controlPlaneHosts(inv).map((h) => ({ label: h.name, host: h.accessIp, port: inv.apiserverPort, targets }));
  const lb = inv.externalLb;
  if (lb?.address !== undefined)
    servers.push({
      label: 'external load balancer',
      host: lb.address,
      port: lb.port,
      targets,
      servername: inv.lbDomainName !== undefined && inv.lbDomainName !== 'localhost' && isIP(inv.lbDomainName) === 0 ? inv.lbDomainName : undefined,
    });
  return servers;
}

/** One server's report as text; compact (inventory runs) folds the covered names into one line. */
export function formatReport(r: ServerReport, compact: boolean): string {
  const lines = [`== ${r.label} (${r.address})`];
  if (r.cert) {
    lines.push(`subject  ${r.cert.subject}`, `issuer   ${r.cert.issuer}`);
    lines.push(`valid    ${r.cert.notBefore.toISOString()} to ${r.cert.notAfter.toISOString()}`);
    lines.push(`SANs     ${[...r.cert.dnsNames.map((d) => `DNS:${d}`), ...r.cert.ipAddresses.map((i) => `IP:${i}`)].join(', ') || '(none)'}`);
    if (!r.cert.chain) lines.push('chain    not checked (give --ca-file to verify it)');
  }
  const covered = r.findings.filter((f) => f.ok && f.kind === 'covered' && f.message.includes(' is covered'));
  for (const f of r.findings) {
    if (compact && f.ok && covered.includes(f)) continue;
    lines.push(`${f.ok ? 'ok  ' : 'FAIL'}     ${f.message}`);
    if (!f.ok && f.fix && !(compact && f.kind === 'not-covered')) lines.push(`         fix: ${f.fix}`);
  }
  if (compact && covered.length > 0) lines.push(`ok       ${covered.length} names and addresses covered`);
  const missing = r.findings.filter((f) => f.kind === 'not-covered' && !f.ok && r.cert);
  if (compact && missing.length > 0) {
    const names = missing.map((f) => f.message.split(' ')[0]!);
    lines.push(`         fix: add ${names.join(', ')} to the apiserver certificate. ${SAN_FIX}`);
  }
  return lines.join('\n') + '\n';
}
