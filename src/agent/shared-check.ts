// kubeward agent: whether the watcher may take the proxy's health checks of the local apiserver as
// its probes (one prober, one opinion), and the feed that hands each check result over.
// The decision is pure; the feed is the only state.
import { formatHostPort } from '../config/fields.ts';
import type { FrontendConfig } from '../proxy/proxy-config.ts';
import { failedProbe, type ProbeResult } from '../probe/probe-result.ts';
import { canonicalIp } from '../base/ip.ts';

/** The watch keys that decide which HTTP request its probe makes. */
export interface WatchProbeKeys {
  healthUrl: string;
  caFile?: string;
  insecureSkipTlsVerify: boolean;
  clientCert?: string;
  clientKey?: string;
  tokenFile?: string;
  tlsServerName?: string;
}

export type SharedCheck =
  | { shared: true; frontend: string; upstream: string; /** Longest wait for the next result before the probe counts as failed. */ waitMs: number }
  | { shared: false; reason: string };

/**
 * The proxy's check stands in for the watcher's probe only when it is the same request: a readyz
 * check of an upstream at the health URL's IP and port, the same path, the same trust (CA file or
 * no verification), the same client credentials and TLS name, in a frontend whose upstream list is
 * static (discovery may drop the upstream, and with it the checks). Anything else: the watcher
 * probes on its own, and the reason is logged.
 */
export function decideSharedCheck(watch: WatchProbeKeys, frontends: readonly FrontendConfig[]): SharedCheck {
  const url = new URL(watch.healthUrl);
  const host = canonicalIp(url.hostname.replace(/^\[|\]$/g, ''));
  if (host === undefined) return { shared: false, reason: `watch.healthUrl host "${url.hostname}" is a name; the proxy's upstreams are addresses` };
  const port = Number(url.port || 443);
  const key = formatHostPort({ host, port });
  let why = `no proxy frontend has the upstream ${key}`;
  for (const f of frontends) {
    const upstream = f.upstreams.find((u) => canonicalIp(u.host) === host && u.port === port);
    if (!upstream) continue;
    const hc = f.healthCheck;
    const mismatch =
      f.discovery !== undefined
        ? 'its upstream list comes from discovery'
        : hc.type !== 'readyz'
          ? `its check is ${hc.type}, not readyz`
          : hc.path !== url.pathname + url.search
            ? `its check path is ${hc.path}, the health URL's ${url.pathname + url.search}`
            : hc.insecureSkipTlsVerify !== watch.insecureSkipTlsVerify || (hc.caFile ?? '') !== (watch.caFile ?? '')
              ? 'it verifies the certificate differently (caFile / insecureSkipTlsVerify)'
              : (hc.clientCert ?? '') !== (watch.clientCert ?? '') ||
                  (hc.clientKey ?? '') !== (watch.clientKey ?? '') ||
                  (hc.tokenFile ?? '') !== (watch.tokenFile ?? '')
                ? 'it authenticates differently (clientCert / clientKey / tokenFile)'
                : (hc.serverName ?? '') !== (watch.tlsServerName ?? '')
                  ? 'it sends a different TLS server name'
                  : undefined;
    if (mismatch === undefined) {
      return { shared: true, frontend: f.name, upstream: formatHostPort(upstream), waitMs: Math.ceil(hc.intervalMs * 1.1) + hc.timeoutMs + 1000 };
    }
    why = `proxy frontend "${f.name}" checks ${key} but ${mismatch}`;
  }
  return { shared: false, reason: why };
}

/** Hands the proxy's check results to whoever waits for the next one of an upstream. */
export class CheckResultFeed {
  readonly #waiters = new Map<string, Set<(r: ProbeResult) => void>>();

  /** The proxy's onCheckResult. */
  push(frontend: string, upstream: string, result: ProbeResult): void {
    const k = `${frontend}\0${upstream}`;
    const waiting = this.#waiters.get(k);
    if (!waiting) return;
    this.#waiters.delete(k);
    for (const resolve of waiting) resolve(result);
  }

  /**
   * The next result for the upstream; a failed 'timeout' result when none comes within waitMs (the
   * proxy stopped checking it: a watcher must not stay up on silence) or when signal aborts.
   */
  next(frontend: string, upstream: string, waitMs: number, signal: AbortSignal, now: () => number = Date.now): Promise<ProbeResult> {
    const k = `${frontend}\0${upstream}`;
    const started = now();
    return new Promise<ProbeResult>((resolve) => {
      const done = (r: ProbeResult): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.#waiters.get(k)?.delete(done);
        resolve(r);
      };
      const silent = (detail: string): void => done(failedProbe('timeout', now() - started, detail));
      const onAbort = (): void => silent('stopped while waiting for the proxy check');
      const timer = setTimeout(() => silent(`no check result from proxy frontend "${frontend}" for ${upstream} within ${waitMs} ms`), waitMs);
      signal.addEventListener('abort', onAbort, { once: true });
      let set = this.#waiters.get(k);
      if (!set) this.#waiters.set(k, (set = new Set()));
      set.add(done);
    });
  }
}
