// Errors from the Kubernetes API, with the HTTP status and the Status reason kept, and a
// classification that controllers use to tell "the API is down" from "the request was wrong".
import { KubewardError, type ErrorCode } from '../../base/errors.ts';
import type { KubeStatus } from './kube-types.ts';

/** How a failed call should be read by a controller. */
export type KubeFailureKind =
  | 'unavailable' // network error, timeout, 5xx, 429, Status reason ServerTimeout/Timeout: try again later
  | 'unauthorized' // 401/403: credentials or RBAC
  | 'not-found'
  | 'conflict' // 409: stale resourceVersion or already exists
  | 'invalid'; // other 4xx: the request itself is wrong

export class KubeApiError extends KubewardError {
  /** HTTP status; undefined when no response arrived (connection refused, timeout, TLS). */
  readonly status: number | undefined;
  /** metav1.Status reason (NotFound, Conflict, ServerTimeout, ...) when the body was a Status. */
  readonly reason: string | undefined;
  readonly method: string;
  readonly path: string;

  constructor(opts: { method: string; path: string; status?: number; reason?: string; message: string; cause?: unknown }) {
    super(codeFor(opts.status), `${opts.method} ${opts.path}: ${opts.message}`, { cause: opts.cause });
    this.name = 'KubeApiError';
    this.status = opts.status;
    this.reason = opts.reason;
    this.method = opts.method;
    this.path = opts.path;
  }

  get kind(): KubeFailureKind {
    return classifyKubeFailure(this.status, this.reason);
  }
}

function codeFor(status: number | undefined): ErrorCode {
  if (status === undefined) return 'E_UPSTREAM';
  if (status === 404) return 'E_NOT_FOUND';
  if (status === 409) return 'E_CONFLICT';
  return 'E_HTTP';
}

/** Pure: the kind of failure for a status and Status reason (no status = no response). */
export function classifyKubeFailure(status: number | undefined, reason?: string): KubeFailureKind {
  if (status === undefined) return 'unavailable';
  if (reason === 'ServerTimeout' || reason === 'Timeout' || reason === 'TooManyRequests') return 'unavailable';
  if (status >= 500 || status === 429) return 'unavailable';
  if (status === 401 || status === 403) return 'unauthorized';
  if (status === 404) return 'not-found';
  if (status === 409) return 'conflict';
  return 'invalid';
}

/** Builds the error for a non-2xx response; the body may be a Status or anything else (a proxy's text). */
export function errorFromResponse(method: string, path: string, status: number, body: string): KubeApiError {
  let parsed: Partial<KubeStatus> | undefined;
  try {
    const obj = JSON.parse(body) as Partial<KubeStatus>;
    if (obj && obj.kind === 'Status') parsed = obj;
  } catch {
    // not JSON: a load balancer's or proxy's error page
  }
  const text = parsed?.message ?? (body.trim().slice(0, 200) || `HTTP ${status}`);
  return new KubeApiError({ method, path, status, reason: parsed?.reason, message: `${status} ${text}` });
}

export function isKubeFailure(err: unknown, kind: KubeFailureKind): boolean {
  return err instanceof KubeApiError && err.kind === kind;
}

export function isNotFound(err: unknown): boolean {
  return isKubeFailure(err, 'not-found');
}

export function isConflict(err: unknown): boolean {
  return isKubeFailure(err, 'conflict');
}
