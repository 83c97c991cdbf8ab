// kubeward check-cert's settings: fields, flags, help text and the checks across keys. The command
// (src/cli/check-cert.ts), --help and docs/plan.md come from here.
// zod/mini, as the daemons: the build leaves classic zod out (src/config/fields.ts says why).
import * as z from 'zod/mini';
import { UsageError } from '../base/errors.ts';
import { duration, ipAddress } from '../config/fields.ts';
import type { OneShotDeclaration } from '../config/mode-declaration.ts';
import { inventoryFields, inventoryFlags } from './plan-config.ts';

/** The defaults, once: the fields fill them in and --help shows them. */
export const DEFAULTS = { timeout: '5s', output: 'table' } as const;

const checkCertFields = {
  ...inventoryFields,
  url: z.optional(z.string().check(z.minLength(1))),
  name: z.optional(z.array(z.string().check(z.minLength(1)))),
  ip: z.optional(z.array(ipAddress)),
  caFile: z.optional(z.string().check(z.minLength(1))),
  timeout: z.prefault(duration({ min: 10 }), DEFAULTS.timeout),
  output: z._default(z.enum(['table', 'json'], { error: 'expected table or json' }), DEFAULTS.output),
};

const HELP = `
Connects with TLS only (no HTTP request), shows the serving certificate, and says whether it covers
the name clients use: the URL's host, or each --name / --ip. Matching follows Go's crypto/x509 as
client-go does: SANs only, never the Common Name. Exit 0 when covered and valid, 1 when not (with
the fix), 2 on bad usage.

Examples:
  kubeward check-cert https://10.0.0.11:6443 --name lb-apiserver.kubernetes.local --ca-file /etc/kubernetes/pki/ca.crt
  kubeward check-cert --inventory inventory.ini --ca-file ca.crt   # every apiserver against every planned SAN`;

export const checkCertDeclaration: OneShotDeclaration<typeof checkCertFields> = {
  path: 'check-cert',
  summary: 'check that an apiserver certificate covers the names and addresses clients dial, and is valid',
  helpAfter: HELP,
  fields: checkCertFields,
  positional: { key: 'url', name: 'url', help: 'https://HOST:PORT of the server (port 6443 when omitted)' },
  flags: [
    ...inventoryFlags,
    { key: 'name', value: '<dns-name>', help: 'name clients use for this server', repeatable: true },
    { key: 'ip', value: '<address>', help: 'address clients use for this server', repeatable: true },
    { key: 'caFile', value: '<file>', help: "verify the chain against this CA (the cluster's ca.crt)" },
    { key: 'timeout', value: '<duration>', help: 'longest wait for the handshake', defaultText: DEFAULTS.timeout },
    { key: 'output', short: '-o', value: '<table|json>', help: 'output format', defaultText: DEFAULTS.output },
  ],
  check: (c) =>
    c.url === undefined && c.inventory === undefined
      ? 'give a URL (like https://10.0.0.11:6443) or --inventory FILE'
      : c.url !== undefined && c.inventory !== undefined
        ? 'give either a URL or --inventory, not both'
        : undefined,
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
