// Sends one HTTP request with per-attempt timeouts and retries (backoff + jitter) on 5xx, timeouts and
// connection failures. Logs method, path, status, latency and request ID, never headers or bodies.
import { changesSomething, type CallFence } from '../../base/call-fence.ts';
import type { Clock } from '../../base/clock.ts';
import type { Logger } from '../../base/logger.ts';
import { timeoutSignal, type TimeoutSignal } from '../../base/timeout-signal.ts';
import { OpenStackError, type OpenStackErrorDetails } from './openstack-error.ts';
import { retryDelayMs, isRetryable, type AttemptOutcome, type RetryPolicy } from './retry-policy.ts';

/** What the sender reads of an answer: fetch's Response has it, and so does node-fetch.ts's. */
export interface FetchResponse {
  status: number;
  headers: HeaderReader;
  text(): Promise<string>;
}

/** Header lookup by name (case-insensitive), null when absent, as fetch's Headers.get. */
export interface HeaderReader {
  get(name: string): string | null;
}

export type FetchFn = (input: URL, init: RequestInit) => Promise<FetchResponse>;

export interface SenderDeps {
  fetch: FetchFn;
  clock: Clock;
  log: Logger;
  policy: RetryPolicy;
  random?: () => number;
  /** Checked just before every attempt of a request that changes something (base/call-fence.ts). */
  fence?: CallFence;
}

export interface SendRequest {
  /** Service name for logs and errors: keystone, nova, neutron, cinder, octavia. */
  service: string;
  method: string;
  url: URL;
  /** May carry X-Auth-Token: never logged. */
  headers: Record<string, string>;
  /** May carry a password: never logged. */
  body?: string;
  idempotent?: boolean;
  signal?: AbortSignal;
}

export interface SendResult {
  status: number;
  headers: HeaderReader;
  text: string;
  requestId?: string;
  attempts: number;
}

export function requestIdOf(headers: HeaderReader): string | undefined {
  return headers.get('x-openstack-request-id') ?? headers.get('x-compute-request-id') ?? undefined;
}

type Attempt = { ok: true; result: Omit<SendResult, 'attempts'> } | { ok: false; outcome: AttemptOutcome; error: unknown };

/**
 * One attempt's signal: the caller's abort (its reason) or the attempt's timeout, whichever comes
 * first (base/timeout-signal.ts, instead of AbortSignal.timeout joined by AbortSignal.any: the
 * operator's start makes thousands of attempts; docs/design/operator-start.md).
 */
function attemptSignal(ms: number, parent: AbortSignal | undefined): TimeoutSignal {
  return timeoutSignal(
    (fire) => {
      const timer = setTimeout(fire, ms);
      // As AbortSignal.timeout's: an attempt in flight keeps the process alive through its socket, not its timer.
      timer.unref();
      return () => clearTimeout(timer);
    },
    () => new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
    parent,
  );
}

async function attemptOnce(deps: SenderDeps, req: SendRequest): Promise<Attempt> {
  // The last moment before the bytes go: after the token, the endpoint and any backoff. A refusal
  // throws out of the whole send (no retry: the fence does not come back up for this call).
  req.signal?.throwIfAborted();
  if (deps.fence && changesSomething(req.method)) deps.fence.check({ service: req.service, method: req.method, path: req.url.pathname });
  const a = attemptSignal(deps.policy.attemptTimeoutMs, req.signal);
  try {
    const res = await deps.fetch(req.url, { method: req.method, headers: req.headers, body: req.body, signal: a.signal });
    const text = await res.text();
    return { ok: true, result: { status: res.status, headers: res.headers, text, requestId: requestIdOf(res.headers) } };
  } catch (err) {
    if (req.signal?.aborted) throw req.signal.reason;
    return { ok: false, outcome: a.expired ? { kind: 'timeout' } : { kind: 'network' }, error: err };
  } finally {
    a.clear();
  }
}

/** Resolves with the final answer (any status); rejects with OpenStackError when no answer came. */
export async function sendWithRetries(deps: SenderDeps, req: SendRequest): Promise<SendResult> {
  const path = req.url.pathname + req.url.search;
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    const a = await attemptOnce(deps, req);
    const ms = Math.round(performance.now() - started);
    const outcome: AttemptOutcome = a.ok ? { kind: 'status', status: a.result.status } : a.outcome;
    const fields = {
      service: req.service,
      method: req.method,
      path,
      attempt,
      ms,
      status: a.ok ? a.result.status : outcome.kind,
      requestId: a.ok ? a.result.requestId : undefined,
    };
    const again = attempt < deps.policy.maxAttempts && isRetryable(outcome, req.method, req.idempotent);
    if (a.ok && (a.result.status < 500 || !again)) {
      deps.log.debug(fields, 'openstack request');
      return { ...a.result, attempts: attempt };
    }
    if (!again) throw noAnswerError(req, path, attempt, a, deps.policy.attemptTimeoutMs);
    const delayMs = retryDelayMs(attempt, deps.policy, deps.random);
    deps.log.warn({ ...fields, retryInMs: delayMs }, 'openstack request failed, retrying');
    try {
      await deps.clock.sleep(delayMs, req.signal);
    } catch (err) {
      // Callers see their own abort reason, whichever await it interrupted.
      throw req.signal?.aborted ? req.signal.reason : err;
    }
  }
}

function noAnswerError(req: SendRequest, path: string, attempts: number, a: Attempt, timeoutMs: number): OpenStackError {
  const details: OpenStackErrorDetails = { service: req.service, method: req.method, path, attempts };
  const cause = a.ok ? undefined : a.error;
  if (!a.ok && a.outcome.kind === 'timeout') {
    return new OpenStackError('E_TIMEOUT', { ...details, faultMessage: `no answer within ${timeoutMs} ms` }, { cause });
  }
  return new OpenStackError('E_UPSTREAM', { ...details, faultMessage: describeNetworkError(cause) }, { cause });
}

function describeNetworkError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  if (cause?.code) return `${cause.code}${cause.message ? ` ${cause.message}` : ''}`;
  return err instanceof Error ? err.message : String(err);
}
