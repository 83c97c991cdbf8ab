// kubeward check-cert: the composition root of the certificate check. Connects with TLS only,
// reads the serving certificate, and judges it with the pure rules in plan/cert-coverage.ts, for
// one URL or for every apiserver (and the external LB) of an inventory's plan. Settings:
// src/plan/check-cert-config.ts; the report: src/plan/check-cert-report.ts.
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { UsageError, describeError } from '../base/errors.ts';
import { checkCertificate, type Finding } from '../plan/cert-coverage.ts';
import { fetchServerCert } from '../plan/fetch-server-cert.ts';
import { formatAddress } from '../plan/render-text.ts';
import { checkCertDeclaration, parseServerUrl } from '../plan/check-cert-config.ts';
import { formatReport, serversOfInventory, type Server, type ServerReport } from '../plan/check-cert-report.ts';
import { loadInventory } from './plan.ts';
import { oneShotCommand, type Io } from './one-shot-command.ts';

async function checkServer(s: Server, ca: { text: string; label: string } | undefined, timeoutMs: number, now: Date): Promise<ServerReport> {
  const address = formatAddress(s.host, s.port);
  const fetched = await fetchServerCert({ host: s.host, port: s.port, servername: s.servername, ca: ca?.text, caLabel: ca?.label, timeoutMs });
  if (!fetched.ok) {
    const finding: Finding = {
      kind: 'not-covered',
      ok: false,
      message: `cannot read the certificate: ${fetched.reason}`,
      fix: `check that an apiserver listens on ${address} and that this machine can reach it`,
    };
    return { label: s.label, address, ok: false, findings: [finding] };
  }
  const findings = checkCertificate(fetched.cert, s.targets, now);
  return { label: s.label, address, ok: findings.every((f) => f.ok), cert: fetched.cert, findings };
}

export function checkCertCommand(io?: Io): Command {
  return oneShotCommand(
    checkCertDeclaration,
    async (config, out) => {
      const url = config.url;
      const ca = config.caFile === undefined ? undefined : { text: await readCa(config.caFile), label: basename(config.caFile) };
      let servers: Server[];
      if (config.inventory !== undefined)
        servers = serversOfInventory(await loadInventory(config.inventory, config.vars, config.kubesprayVersion, config.playbookDir));
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
}

async function readCa(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--ca-file ${path}: cannot read the file (${describeError(err)})`, { cause: err });
  }
}
