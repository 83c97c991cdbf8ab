// kubeward check-cert: the composition root of the certificate check. Connects with TLS only,
// reads the serving certificate, and judges it with the pure rules in plan/cert-coverage.ts, for
// one URL or for every apiserver (and the external LB) of an inventory's plan.
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { basename } from 'node:path';
import { Option, type Command } from 'commander';
// zod/mini, as the daemons: the build leaves classic zod out (src/config/fields.ts says why).
import * as z from 'zod/mini';
import { UsageError, describeError } from '../base/errors.ts';
import { duration, ipAddress } from '../config/fields.ts';
import { checkCertificate, SAN_FIX, type Finding, type ServerCertFacts } from '../plan/cert-coverage.ts';
import { fetchServerCert } from '../plan/fetch-server-cert.ts';
import { computeSans } from '../plan/apiserver-sans.ts';
import { controlPlaneHosts, type Inventory } from '../plan/inventory.ts';
import { formatAddress } from '../plan/render-text.ts';
import { inventoryFields, inventoryOptions, loadInventory, oneShotCommand, type Io } from './plan.ts';

interface Server {
  label: string;
  host: string;
  port: number;
  /** Names and addresses clients dial on this server; all must be covered. */
  targets: string[];
  servername?: string;
}

interface ServerReport {
  label: string;
  address: string;
  ok: boolean;
  cert?: ServerCertFacts;
  findings: Finding[];
}

const fields = {
  ...inventoryFields,
  url: z.optional(z.string().check(z.minLength(1))),
  name: z.optional(z.array(z.string().check(z.minLength(1)))),
  ip: z.optional(z.array(ipAddress)),
  caFile: z.optional(z.string().check(z.minLength(1))),
  timeout: z.prefault(duration({ min: 10 }), '5s'),
  output: z._default(z.enum(['table', 'json'], { error: 'expected table or json' }), 'table'),
};

/** "https://host:port/path", "host:port" or "host" (port 6443), IPv6 in brackets. */
export function parseServerUrl(text: string): { host: string; port: number } {
  let u: URL;
  try {
    u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`);
  } catch {
    throw new UsageError(`URL "${text}": not a URL; write it like https://10.0.0.11:6443 or lb.example.com:8383`);
  }
  if (u.protocol !== 'https:') throw new UsageError(`URL "${text}": only https:// servers have certificates to check`);
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  return { host, port: u.port === '' ? 6443 : Number(u.port) };
}

function serversOfInventory(inv: Inventory): Server[] {
  const targets = computeSans(inv).map((s) => s.value);
  const servers: Server[] = controlPlaneHosts(inv).map((h) => ({ label: h.name, host: h.accessIp, port: inv.apiserverPort, targets }));
  const lb = inv.externalLb;
  if (lb?.address !== undefined) servers.push({ label: 'external load balancer', host: lb.address, port: lb.port, targets, servername: inv.lbDomainName !== undefined && inv.lbDomainName !== 'localhost' && isIP(inv.lbDomainName) === 0 ? inv.lbDomainName : undefined });
  return servers;
}

async function checkServer(s: Server, ca: { text: string; label: string } | undefined, timeoutMs: number, now: Date): Promise<ServerReport> {
  const address = formatAddress(s.host, s.port);
  const fetched = await fetchServerCert({ host: s.host, port: s.port, servername: s.servername, ca: ca?.text, caLabel: ca?.label, timeoutMs });
  if (!fetched.ok) {
    const finding: Finding = { kind: 'not-covered', ok: false, message: `cannot read the certificate: ${fetched.reason}`, fix: `check that an apiserver listens on ${address} and that this machine can reach it` };
    return { label: s.label, address, ok: false, findings: [finding] };
  }
  const findings = checkCertificate(fetched.cert, s.targets, now);
  return { label: s.label, address, ok: findings.every((f) => f.ok), cert: fetched.cert, findings };
}

function formatReport(r: ServerReport, compact: boolean): string {
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

const HELP = `
Connects with TLS only (no HTTP request), shows the serving certificate, and says whether it covers
the name clients use: the URL's host, or each --name / --ip. Matching follows Go's crypto/x509 as
client-go does: SANs only, never the Common Name. Exit 0 when covered and valid, 1 when not (with
the fix), 2 on bad usage.

Examples:
  kubeward check-cert https://10.0.0.11:6443 --name lb-apiserver.kubernetes.local --ca-file /etc/kubernetes/pki/ca.crt
  kubeward check-cert --inventory inventory.ini --ca-file ca.crt   # every apiserver against every planned SAN`;

export function checkCertCommand(io?: Io): Command {
  const cmd = oneShotCommand(
    'check-cert',
    {
      summary: 'check that an apiserver certificate covers the names and addresses clients dial, and is valid',
      helpAfter: HELP,
      fields,
      positional: 'url',
      check: (c) =>
        c.url === undefined && c.inventory === undefined
          ? 'give a URL (like https://10.0.0.11:6443) or --inventory FILE'
          : c.url !== undefined && c.inventory !== undefined
            ? 'give either a URL or --inventory, not both'
            : undefined,
    },
    [
      ...inventoryOptions(),
      new Option('--name <dns-name>', 'name clients use for this server; repeatable').argParser(collect),
      new Option('--ip <address>', 'address clients use for this server; repeatable').argParser(collect),
      new Option('--ca-file <file>', 'verify the chain against this CA (the cluster\'s ca.crt)'),
      new Option('--timeout <duration>', 'longest wait for the handshake (default: 5s)'),
      new Option('-o, --output <table|json>', 'output format (default: table)'),
    ],
    async (config, out) => {
      const url = config.url;
      const ca = config.caFile === undefined ? undefined : { text: await readCa(config.caFile), label: basename(config.caFile) };
      let servers: Server[];
      if (config.inventory !== undefined) servers = serversOfInventory(await loadInventory(config.inventory, config.vars, config.kubesprayVersion));
      else {
        const { host, port } = parseServerUrl(url!);
        const targets = [...(config.name ?? []), ...(config.ip ?? [])];
        const sni = config.name?.[0] ?? (isIP(host) === 0 ? host : undefined);
        servers = [{ label: url!, host, port, targets: targets.length > 0 ? targets : [host], servername: sni }];
      }
      const now = new Date();
      const reports = await Promise.all(servers.map((s) => checkServer(s, ca, config.timeout, now)));
      if (config.output === 'json') out.out(JSON.stringify({ ok: reports.every((r) => r.ok), servers: reports }, null, 2) + '\n');
      else out.out(reports.map((r) => formatReport(r, config.inventory !== undefined)).join('\n'));
      return reports.every((r) => r.ok) ? 0 : 1;
    },
    io,
  );
  return cmd.argument('[url]', 'https://HOST:PORT of the server (port 6443 when omitted)');
}

function collect(v: string, prev: string[] | undefined): string[] {
  return [...(prev ?? []), v];
}

async function readCa(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--ca-file ${path}: cannot read the file (${describeError(err)})`, { cause: err });
  }
}
