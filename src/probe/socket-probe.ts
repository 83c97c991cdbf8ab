// Connect-only (tcp) and handshake-only (tls) probes, for upstreams that answer no HTTP health path.
import { connect as tcpConnect } from 'node:net';
import { describeError } from '../base/errors.ts';
import { nodeTls } from '../base/lazy-builtins.ts';
import { classifyLocal, classifyProbeError, failedProbe, stopwatch, type ProbeResult } from './probe-result.ts';

export interface SocketProbeOptions {
  host: string;
  port: number;
  timeoutMs: number;
  /** tls only */
  ca?: string | Buffer;
  insecureSkipTlsVerify?: boolean;
  cert?: string | Buffer;
  key?: string | Buffer;
  servername?: string;
}

export function probeTcp(opts: SocketProbeOptions, signal?: AbortSignal): Promise<ProbeResult> {
  return probeSocket(opts, false, signal);
}

export function probeTls(opts: SocketProbeOptions, signal?: AbortSignal): Promise<ProbeResult> {
  return probeSocket(opts, true, signal);
}

function probeSocket(opts: SocketProbeOptions, tls: boolean, signal?: AbortSignal): Promise<ProbeResult> {
  const elapsed = stopwatch();
  return new Promise((resolve) => {
    try {
      connectAndWait(resolve);
    } catch (err) {
      // tls.connect throws synchronously for a key or certificate it cannot load: a local fault.
      resolve(failedProbe(classifyLocal(err), elapsed(), describeError(err)));
    }
  });

  function connectAndWait(resolve: (r: ProbeResult) => void): void {
    let timedOut = false;
    const sock = tls
      ? nodeTls().connect({
          host: opts.host,
          port: opts.port,
          ca: opts.ca,
          cert: opts.cert,
          key: opts.key,
          servername: opts.servername,
          rejectUnauthorized: !opts.insecureSkipTlsVerify,
        })
      : tcpConnect({ host: opts.host, port: opts.port });
    const done = (r: ProbeResult) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      sock.destroy();
      resolve(r);
    };
    const onAbort = () => done(failedProbe('error', elapsed(), 'probe cancelled'));
    const timer = setTimeout(() => {
      timedOut = true;
      done(failedProbe('timeout', elapsed(), `no ${tls ? 'handshake' : 'connect'} within ${opts.timeoutMs} ms`));
    }, opts.timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    sock.once(tls ? 'secureConnect' : 'connect', () =>
      done({ ok: true, status: 0, latencyMs: elapsed(), reason: 'ok', detail: tls ? 'handshake completed' : 'connected' }),
    );
    sock.once('error', (err) => done(failedProbe(classifyProbeError(err, timedOut), elapsed(), err.message)));
  }
}
