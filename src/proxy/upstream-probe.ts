// Turns a frontend's health-check settings into a probe of one upstream, reusing src/probe:
// readyz = HTTPS GET (apiserver /readyz, etcd /health), tls = handshake only, tcp = connect only.
import type { HostPort } from '../config/fields.ts';
import { formatHostPort } from '../config/fields.ts';
import { probeHttps } from '../probe/https-probe.ts';
import type { ProbeTlsContext } from '../probe/probe-tls-context.ts';
import { probeTcp, probeTls } from '../probe/socket-probe.ts';
import type { ProbeResult } from '../probe/probe-result.ts';
import type { LoadedHealthCheck } from './proxy-config.ts';
import { parseVersionBody, type KubeMinor } from './version-skew.ts';

/**
 * The upstream's Kubernetes version from GET /version (readable without credentials on an
 * apiserver); undefined for tcp checks, on any failure, or a body that is not an apiserver's.
 */
export async function fetchUpstreamVersion(
  target: HostPort,
  check: LoadedHealthCheck,
  tlsContext: ProbeTlsContext,
  signal: AbortSignal,
): Promise<KubeMinor | undefined> {
  if (check.type === 'tcp') return undefined;
  const result = await probeHttps(
    {
      url: new URL(`https://${formatHostPort(target)}/version`),
      timeoutMs: check.timeoutMs,
      tokenFile: check.tokenFile,
      connectHost: target.host,
      connectPort: target.port,
      ca: check.ca,
      cert: check.cert,
      key: check.key,
      insecureSkipTlsVerify: check.insecureSkipTlsVerify,
      servername: check.serverName,
      keepBody: true,
      tlsContext,
    },
    signal,
  );
  return result.ok && result.body !== undefined ? parseVersionBody(result.body) : undefined;
}

/** `tlsContext`: the frontend's, so that its checks share one context per set of material. */
export function probeUpstream(target: HostPort, check: LoadedHealthCheck, tlsContext: ProbeTlsContext, signal: AbortSignal): Promise<ProbeResult> {
  const tlsOpts = {
    ca: check.ca,
    cert: check.cert,
    key: check.key,
    insecureSkipTlsVerify: check.insecureSkipTlsVerify,
    servername: check.serverName,
  };
  switch (check.type) {
    case 'readyz':
      return probeHttps(
        {
          url: new URL(`https://${formatHostPort(target)}${check.path}`),
          timeoutMs: check.timeoutMs,
          tokenFile: check.tokenFile,
          connectHost: target.host,
          connectPort: target.port,
          ...tlsOpts,
          tlsContext,
        },
        signal,
      );
    case 'tls':
      return probeTls({ host: target.host, port: target.port, timeoutMs: check.timeoutMs, ...tlsOpts }, signal);
    case 'tcp':
      return probeTcp({ host: target.host, port: target.port, timeoutMs: check.timeoutMs }, signal);
  }
}
