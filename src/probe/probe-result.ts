// What a health probe found: a value, never a throw, with a reason a person can act on.

export type ProbeReason =
  | 'ok'
  | 'http-status' // answered, but not with the expected status
  | 'refused' // nothing listens: the process is gone
  | 'timeout' // no answer within the timeout: hung, or packets dropped
  | 'tls' // handshake or certificate verification failed
  | 'reset' // the peer reset or closed the connection mid-exchange
  | 'unreachable' // no route to the host
  | 'dns' // the name did not resolve
  | 'local' // a fault on this side (no fds, no buffers, unreadable token, bad TLS material): says nothing about the target
  | 'error'; // anything else; detail says what

/**
 * errno codes that mean this process or node is short of something, not that the peer failed:
 * file descriptors (EMFILE, ENFILE), kernel buffers (ENOBUFS) or memory (ENOMEM).
 */
const LOCAL_CODES = new Set(['EMFILE', 'ENFILE', 'ENOBUFS', 'ENOMEM']);

export interface ProbeResult {
  ok: boolean;
  /** HTTP status when one was received, else 0. */
  status: number;
  latencyMs: number;
  reason: ProbeReason;
  /** One line of evidence: the status text or the error message. */
  detail: string;
  /** The answer's body, for probes that asked for it (keepBody). */
  body?: string;
}

const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_TLS_HANDSHAKE_TIMEOUT',
]);

/** Maps a Node socket/TLS error to a reason. `timedOut` is true when our own deadline fired. */
export function classifyProbeError(err: unknown, timedOut: boolean): ProbeReason {
  if (timedOut) return 'timeout';
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? '';
  // ERR_OSSL_*: OpenSSL refusing our own certificate or key material, before any byte is sent.
  if (LOCAL_CODES.has(code) || code.startsWith('ERR_OSSL_') || code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_ARG_TYPE') return 'local';
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED') return 'reset';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EADDRNOTAVAIL') return 'unreachable';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  if (TLS_CODES.has(code) || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_')) return 'tls';
  const message = err instanceof Error ? err.message : '';
  if (/socket hang up|other side closed|disconnected before secure/i.test(message)) return 'reset';
  return 'error';
}

/** A synchronous throw while setting up a probe: local, unless it names a network cause. */
export function classifyLocal(err: unknown): ProbeReason {
  const reason = classifyProbeError(err, false);
  return reason === 'error' || reason === 'tls' ? 'local' : reason;
}

export function failedProbe(reason: ProbeReason, latencyMs: number, detail: string, status = 0): ProbeResult {
  return { ok: false, status, latencyMs, reason, detail };
}

/**
 * Milliseconds since the call, to a tenth. From process.hrtime, not performance.now(): the first use
 * of the performance global loads Node's performance timeline (nine modules, about 0.3 MiB RSS that
 * every daemon kept for a stopwatch, docs/footprint.md).
 */
export function stopwatch(): () => number {
  const start = process.hrtime.bigint();
  return () => Math.round(Number(process.hrtime.bigint() - start) / 1e5) / 10;
}

/** The shortest stall of our own loop that can cost a probe its deadline. */
const MIN_STALL_MS = 100;

/**
 * A timeout during which this process's own loop stood still for at least a quarter of the wait
 * (and MIN_STALL_MS) is a local fault: the answer may have been waiting unread. Anything else,
 * and any timeout without such a stall, stands as the probe found it.
 */
export function judgeStall(result: ProbeResult, stallMs: number): ProbeResult {
  if (result.reason !== 'timeout' || stallMs < Math.max(MIN_STALL_MS, result.latencyMs / 4)) return result;
  return failedProbe(
    'local',
    result.latencyMs,
    `this process stood still for ${stallMs} ms of the check's ${result.latencyMs} ms (${result.detail}): the timeout says nothing about the peer`,
    result.status,
  );
}
