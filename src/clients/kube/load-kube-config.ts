// Where a KubeConfig comes from: a kubeconfig file, kubeconfig text (a Secret's value), or the pod's
// service account. The caller (src/cli) reads the environment and passes what it found.
import { existsSync, readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { KubewardError, UsageError, describeError } from '../../base/errors.ts';

export type KubeConfigSource =
  | { kind: 'file'; path: string; context?: string; flag?: string }
  | { kind: 'text'; text: string; context?: string; what: string }
  | { kind: 'in-cluster'; host: string; port: string; serviceAccountDir?: string };

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export function loadKubeConfig(source: KubeConfigSource): KubeConfig {
  const kc = new KubeConfig();
  switch (source.kind) {
    case 'file':
      if (!existsSync(source.path)) {
        throw new UsageError(`${source.flag ?? '--kubeconfig'} ${source.path}: no such file; give the path of a kubeconfig`);
      }
      try {
        kc.loadFromFile(source.path);
      } catch (err) {
        throw new UsageError(`${source.flag ?? '--kubeconfig'} ${source.path}: not a kubeconfig (${describeError(err)})`, { cause: err });
      }
      break;
    case 'text':
      try {
        kc.loadFromString(source.text);
        // The parser's strings (token, CA, server) are slices of the whole text and keep all of it
        // alive, once per cluster in the operator: load again from a copy that shares nothing with it.
        kc.loadFromOptions(JSON.parse(JSON.stringify({ clusters: kc.clusters, users: kc.users, contexts: kc.contexts, currentContext: kc.currentContext })));
      } catch (err) {
        throw new KubewardError('E_CONFIG', `${source.what}: not a kubeconfig (${describeError(err)})`, { cause: err });
      }
      break;
    case 'in-cluster':
      loadInCluster(kc, source);
      break;
  }
  if (source.kind !== 'in-cluster' && source.context) kc.setCurrentContext(source.context);
  if (!kc.getCurrentCluster()) {
    const what = source.kind === 'file' ? source.path : source.kind === 'text' ? source.what : 'in-cluster config';
    throw new KubewardError('E_CONFIG', `${what}: the current context names no cluster; set current-context`);
  }
  return kc;
}

/** Like client-node's loadFromCluster, but with the host and port passed in rather than read from the environment. */
function loadInCluster(kc: KubeConfig, src: { host: string; port: string; serviceAccountDir?: string }): void {
  const dir = src.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const host = isIPv6(src.host) ? `[${src.host}]` : src.host;
  const namespaceFile = `${dir}/namespace`;
  kc.loadFromOptions({
    clusters: [{ name: 'in-cluster', server: `https://${host}:${src.port}`, caFile: `${dir}/ca.crt`, skipTLSVerify: false }],
    // The tokenFile provider re-reads the projected token, which the kubelet rotates.
    users: [{ name: 'in-cluster', authProvider: { name: 'tokenFile', config: { tokenFile: `${dir}/token` } } }],
    contexts: [
      {
        name: 'in-cluster',
        cluster: 'in-cluster',
        user: 'in-cluster',
        namespace: existsSync(namespaceFile) ? readFileSync(namespaceFile, 'utf8').trim() : undefined,
      },
    ],
    currentContext: 'in-cluster',
  });
}
