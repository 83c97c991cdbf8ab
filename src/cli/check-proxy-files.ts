// The proxy's config check beyond its schema: every frontend's health-check material (CA, client
// certificate and key, token) and discovery kubeconfig, read and checked without opening a socket.
import { loadHealthCheck, resolveProxyConfig, type proxyFields } from '../proxy/proxy-config.ts';
import type { ModeConfig } from '../config/mode-declaration.ts';
import { UsageError } from '../base/errors.ts';

/** Throws UsageError (or E_CONFIG) naming the frontend key and file at the first unusable one. */
export async function checkProxyFiles(config: ModeConfig<typeof proxyFields>, where: { configPath?: string } = {}): Promise<void> {
  if (config.watchConfig && !where.configPath) throw new UsageError('--watch-config needs --config FILE to watch');
  for (const fc of resolveProxyConfig(config).frontends) {
    await loadHealthCheck(fc);
    const path = fc.discovery?.kubeconfig;
    if (path === undefined) continue;
    // Loaded only for discovery, as the proxy itself does: a proxy without it never holds the Kubernetes client.
    const [{ readKubeconfigFor }, { loadKubeConfig }, { checkKubeConfigFiles }] = await Promise.all([
      import('../proxy/discovery-kubeconfig.ts'),
      import('../clients/kube/load-kube-config.ts'),
      import('../clients/kube/check-kubeconfig-files.ts'),
    ]);
    // The address only fills the rewritten server field; nothing is dialled.
    const text = await readKubeconfigFor(path, fc.listen[0] ?? { host: '127.0.0.1', port: 6443 });
    const what = `kubeconfig ${path}`;
    await checkKubeConfigFiles(loadKubeConfig({ kind: 'text', text, what }), what);
  }
}
