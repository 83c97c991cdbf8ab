// Discovery talks to the API through the proxy's own frontend, so it works whenever clients do and
// needs no address of its own. This points a kubeconfig's current cluster at the frontend.
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { UsageError, describeError } from '../base/errors.ts';
import { formatHostPort, type HostPort } from '../config/fields.ts';

type Doc = {
  'current-context'?: string;
  contexts?: { name: string; context?: { cluster?: string; user?: string } }[];
  clusters?: { name: string; cluster?: Record<string, unknown> }[];
  users?: { name: string; user?: Record<string, unknown> }[];
};

const PATH_KEYS = ['certificate-authority', 'client-certificate', 'client-key', 'tokenFile'] as const;

/**
 * Pure: the kubeconfig text with the current cluster's server set to `server`. A server certificate
 * is verified against the original host name (tls-server-name) when that was a name; an IP
 * address needs the certificate to cover the frontend's address (kubespray adds 127.0.0.1 and
 * localhost to the apiserver's SANs for its own node-local proxy). Relative file paths are made
 * absolute against the kubeconfig's directory, since the text no longer lives there.
 */
export function pointKubeconfigAt(text: string, server: HostPort, baseDir: string): string {
  const doc = parseYaml(text) as Doc;
  const ctx = doc.contexts?.find((c) => c.name === doc['current-context'])?.context;
  const cluster = doc.clusters?.find((c) => c.name === ctx?.cluster)?.cluster;
  if (!cluster) throw new Error('the current context names no cluster');
  const original = new URL(String(cluster.server ?? 'https://localhost'));
  const host = original.hostname.replace(/^\[|\]$/g, '');
  if (cluster['tls-server-name'] === undefined && isIP(host) === 0) cluster['tls-server-name'] = host;
  cluster.server = `https://${formatHostPort(server)}`;
  const absolutize = (obj: Record<string, unknown> | undefined) => {
    for (const k of PATH_KEYS) {
      const v = obj?.[k];
      if (typeof v === 'string' && !isAbsolute(v)) obj![k] = resolve(baseDir, v);
    }
  };
  absolutize(cluster);
  absolutize(doc.users?.find((u) => u.name === ctx?.user)?.user);
  return stringifyYaml(doc);
}

export async function readKubeconfigFor(path: string, server: HostPort): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(`kubeconfig ${path}: cannot read (${describeError(err)})`, { cause: err });
  }
  try {
    return pointKubeconfigAt(text, server, dirname(path));
  } catch (err) {
    throw new UsageError(`kubeconfig ${path}: not a usable kubeconfig (${describeError(err)})`, { cause: err });
  }
}
