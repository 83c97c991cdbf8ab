// --metrics-address: the authenticated /metrics listener on the node's address (src/admin/
// metrics-server.ts). Its apiserver client and TLS are loaded only when the flag is set, so the
// daemons that do not use it never load the Kubernetes client.
import { UsageError, describeError } from '../base/errors.ts';
import { systemClock } from '../base/clock.ts';
import type { Logger } from '../base/logger.ts';
import type { Registry } from '../admin/metrics.ts';
import { formatHostPort } from '../config/fields.ts';
import type { CommonConfig } from '../config/mode-declaration.ts';
import type { MetricsServer } from '../admin/metrics-server.ts';
import type { ListenerHandover } from '../handover/handover-session.ts';

export async function startMetricsListener(
  config: CommonConfig,
  registry: Registry,
  log: Logger,
  reusePort: boolean,
  handover?: ListenerHandover,
): Promise<MetricsServer | undefined> {
  const address = config.metricsAddress;
  if (address === undefined || address === 'off') return undefined;
  if (config.metricsTlsCertFile === undefined || config.metricsTlsKeyFile === undefined) {
    throw new UsageError('--metrics-address needs --metrics-tls-cert-file and --metrics-tls-key-file: scrapes carry bearer tokens, which travel over TLS only');
  }
  const { loadMetricsTls } = await import('../admin/metrics-tls.ts');
  const tls = await loadMetricsTls(config.metricsTlsCertFile, config.metricsTlsKeyFile);
  const [{ loadKubeConfig }, { KubeClient }, { kubeTokenReviewer }, { MetricsAuth }, { startMetricsServer }] = await Promise.all([
    import('../clients/kube/load-kube-config.ts'),
    import('../clients/kube/kube-client.ts'),
    import('../admin/kube-token-reviewer.ts'),
    import('../admin/metrics-auth.ts'),
    import('../admin/metrics-server.ts'),
  ]);
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT;
  if (config.metricsKubeconfig === undefined && (!host || !port)) {
    throw new UsageError('--metrics-address: not running inside a cluster; give --metrics-kubeconfig for the apiserver that reviews scrape tokens');
  }
  const kc = loadKubeConfig(
    config.metricsKubeconfig !== undefined
      ? { kind: 'file', path: config.metricsKubeconfig, flag: '--metrics-kubeconfig' }
      : { kind: 'in-cluster', host: host!, port: port! },
  );
  const client = new KubeClient(kc, { keepAlive: true, userAgent: 'kubeward-metrics-auth' });
  const auth = new MetricsAuth({ reviewer: kubeTokenReviewer(client), clock: systemClock });
  return startMetricsServer({ address, tls, registry, auth, log, reusePort, handover }).catch((err: unknown) => {
    throw new UsageError(`--metrics-address ${formatHostPort(address)}: cannot listen (${describeError(err)}); pick a free port or "off"`, { cause: err });
  });
}
