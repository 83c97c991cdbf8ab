// HTTPS GET health probe (apiserver /readyz, etcd /health): a new connection every time, so a hung
// server is noticed, with a hard deadline that covers connect, handshake, headers and body.
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { describeError } from '../base/errors.ts';
import { nodeHttps, nodeTls } from '../base/lazy-builtins.ts';
import { classifyLocal, classifyProbeError, failedProbe, stopwatch, type ProbeResult } from './probe-result.ts';
import { checkToken } from './tls-material.ts';
import type { ProbeTlsContext } from './probe-tls-context.ts';

export interface HttpsProbeOptions {
  url: URL;
  timeoutMs: number;
  /** PEM CA bundle; without it the system roots are used unless verification is off. */
  ca?: string | Buffer;
  /** Explicit opt-out of certificate verification (the OpenShift watcher's behaviour). */
  insecureSkipTlsVerify?: boolean;
  cert?: string | Buffer;
  key?: string | Buffer;
  /** File holding a bearer token; read on every probe so a rotated token is picked up. */
  tokenFile?: string;
  /** TLS server name; default the URL's host when it is a name. */
  servername?: string;
  /** Status that counts as healthy; default 200. */
  expectStatus?: number;
  /** Host:port to connect to instead of the URL's (the proxy probes each upstream under one URL). */
  connectHost?: string;
  connectPort?: number;
  /** Return the body (up to 64 KiB) of a healthy answer in the result. */
  keepBody?: boolean;
  /** The owner's context for this material, reused across probes; without it each probe builds one. */
  tlsContext?: ProbeTlsContext;
}

const BODY_LIMIT = 64 * 1024;

export async function probeHttps(opts: HttpsProbeOptions, signal?: AbortSignal): Promise<ProbeResult> {
  const elapsed = stopwatch();
  let token: string | undefined;
  if (opts.tokenFile) {
    // A token we cannot read or use is our fault, not the server's: reason local.
    let text: string;
    try {
      text = await readFile(opts.tokenFile, 'utf8');
    } catch (err) {
      return failedProbe('local', elapsed(), `cannot read token file ${opts.tokenFile}: ${describeError(err)}`);
    }
    const checked = checkToken(text);
    if (!checked.ok) return failedProbe('local', elapsed(), `token file ${opts.tokenFile} ${checked.problem}`);
    token = checked.token;
  }
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  const abort = signal ? AbortSignal.any([deadline, signal]) : deadline;
  const host = opts.connectHost ?? opts.url.hostname.replace(/^\[|\]$/g, '');
  const servername = opts.servername ?? (isIP(opts.url.hostname.replace(/^\[|\]$/g, '')) ? undefined : opts.url.hostname);

  return new Promise<ProbeResult>((resolve) => {
    try {
      sendRequest(resolve);
    } catch (err) {
      // https.request throws synchronously for options it cannot use (bad key, invalid header):
      // nothing reached the server, so it is a local fault, returned as a value.
      resolve(failedProbe(classifyLocal(err), elapsed(), describeError(err)));
    }
  });

  function sendRequest(resolve: (r: ProbeResult) => void): void {
    let settled = false;
    const finish = (r: ProbeResult) => {
      if (settled) return;
      settled = true;
      resolve(r);
    };
    // https.request hands its options to tls.connect, which takes a built context (@types/node
    // leaves secureContext out of https.RequestOptions).
    const options: import('node:https').RequestOptions & Pick<import('node:tls').ConnectionOptions, 'secureContext'> = {
      host,
      port: opts.connectPort ?? (Number(opts.url.port) || 443),
      path: opts.url.pathname + opts.url.search,
      method: 'GET',
      agent: false,
      secureContext: opts.tlsContext ? opts.tlsContext.for(opts) : nodeTls().createSecureContext({ ca: opts.ca, cert: opts.cert, key: opts.key }),
      servername,
      rejectUnauthorized: !opts.insecureSkipTlsVerify,
      headers: { accept: 'application/json, */*', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      signal: abort,
    };
    const req = nodeHttps().request(options, (res) => {
      const status = res.statusCode ?? 0;
      let size = 0;
      let body = '';
      res.on('data', (chunk: Buffer) => {
        if (size < BODY_LIMIT) body += chunk.toString('utf8', 0, Math.min(chunk.length, BODY_LIMIT - size));
        size += chunk.length;
      });
      res.on('end', () => {
        const ok = status === (opts.expectStatus ?? 200);
        const detail = `HTTP ${status}${ok ? '' : `: ${body.trim().split('\n').slice(-3).join(' | ').slice(0, 200)}`}`;
        finish({ ok, status, latencyMs: elapsed(), reason: ok ? 'ok' : 'http-status', detail, ...(ok && opts.keepBody ? { body } : {}) });
      });
      res.on('error', (err) => finish(failedProbe(classifyProbeError(err, deadline.aborted), elapsed(), err.message, status)));
    });
    req.on('error', (err) => {
      const reason = classifyProbeError(err, deadline.aborted);
      const detail = reason === 'timeout' ? `no answer within ${opts.timeoutMs} ms` : err.message;
      finish(failedProbe(reason, elapsed(), detail));
    });
    req.end();
  }
}
