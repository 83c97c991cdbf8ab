// The management cluster most controller suites start from: a real kube-apiserver with the
// ManagedCluster CRD from deploy/operator installed and, when asked, one namespace, plus a client
// and the kubeconfig text (for the Secrets the ManagedClusters point at). One home for the set-up the
// routegc, flight and operator suites used to repeat.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createKubeApi, type KubeApi } from '../../src/clients/kube/kube-api.ts';
import { loadKubeConfig } from '../../src/clients/kube/load-kube-config.ts';
import { ensureNamespace, installCrd } from './kube-objects.ts';
import { suiteFixture } from '../suite-fixture.ts';
import { startKubeApiserver, type KubeTestServer } from './kube-test-server.ts';

export const MANAGED_CLUSTER_CRD_PATH = join(import.meta.dirname, '../../deploy/operator/base/managedcluster-crd.yaml');

export interface KubeCluster {
  kube: KubeTestServer;
  api: KubeApi;
  kubeconfigText: string;
}

/** Starts the apiserver and installs the CRD (and the namespace); on a failure half way the apiserver is stopped again. */
export async function startKubeCluster(opts: { namespace?: string } = {}): Promise<KubeCluster> {
  const kube = await startKubeApiserver();
  try {
    const api = createKubeApi(loadKubeConfig({ kind: 'file', path: kube.kubeconfigPath }));
    await installCrd(api, await readFile(MANAGED_CLUSTER_CRD_PATH, 'utf8'));
    if (opts.namespace !== undefined) await ensureNamespace(api, opts.namespace);
    return { kube, api, kubeconfigText: await readFile(kube.kubeconfigPath, 'utf8') };
  } catch (err) {
    await kube.stop();
    throw err;
  }
}

/** Inside a describe: the cluster of startKubeCluster for the whole suite (see suiteFixture). */
export function useKubeCluster(opts: { namespace?: string } = {}): KubeCluster {
  return suiteFixture(
    'the kube-apiserver fixture',
    () => startKubeCluster(opts),
    (c) => c.kube.stop(),
  );
}
