// Reads the files a loaded kubeconfig names for its current cluster and user (CA, client
// certificate and key) and checks them, so a config check finds a missing or broken file that
// client-node would only read at the first request.
import { readFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { UsageError, describeError } from '../../base/errors.ts';
import { caBundleProblem, clientPairProblem } from '../../probe/tls-material.ts';

/** Throws UsageError naming `what` (the flag and path) and the kubeconfig key when a named file is unusable. */
export async function checkKubeConfigFiles(kc: KubeConfig, what: string): Promise<void> {
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  const read = async (key: string, path: string | undefined): Promise<string | undefined> => {
    if (!path) return undefined;
    try {
      return await readFile(path, 'utf8');
    } catch (err) {
      throw new UsageError(`${what}: ${key} ${path}: cannot read (${describeError(err)})`, { cause: err });
    }
  };
  const ca = await read('certificate-authority', cluster?.caFile);
  const caProblem = ca === undefined ? undefined : caBundleProblem(ca);
  if (caProblem) throw new UsageError(`${what}: certificate-authority ${cluster?.caFile}: ${caProblem}`);
  const cert = await read('client-certificate', user?.certFile);
  const key = await read('client-key', user?.keyFile);
  const pair = cert !== undefined && key !== undefined ? clientPairProblem(cert, key) : undefined;
  if (pair) {
    const [name, path] = pair.key === 'cert' ? ['client-certificate', user?.certFile] : ['client-key', user?.keyFile];
    throw new UsageError(`${what}: ${name} ${path}: ${pair.problem}`);
  }
}
