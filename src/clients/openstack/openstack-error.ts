// Errors from OpenStack calls: HTTP status, the service's own fault type, and the request ID that
// operators quote to their cloud's support.
import { KubewardError, type ErrorCode } from '../../base/errors.ts';

export interface OpenStackErrorDetails {
  service: string;
  method: string;
  /** Path and query, never headers or bodies (they may carry credentials). */
  path: string;
  /** HTTP status; undefined when no answer came (timeout, connection refused). */
  status?: number;
  /** NeutronError.type, the Nova/Cinder fault key (itemNotFound), Keystone's title, Octavia's faultcode. */
  faultType?: string;
  faultMessage?: string;
  requestId?: string;
  attempts: number;
}

export class OpenStackError extends KubewardError {
  readonly details: OpenStackErrorDetails;

  constructor(code: ErrorCode, details: OpenStackErrorDetails, options?: { cause?: unknown }) {
    super(code, formatMessage(details, options?.cause), options);
    this.name = 'OpenStackError';
    this.details = details;
  }

  get status(): number | undefined {
    return this.details.status;
  }

  get faultType(): string | undefined {
    return this.details.faultType;
  }

  get requestId(): string | undefined {
    return this.details.requestId;
  }
}

function formatMessage(d: OpenStackErrorDetails, cause: unknown): string {
  const what = d.status !== undefined ? `${d.status}${d.faultType ? ` ${d.faultType}` : ''}` : 'no answer';
  const why = d.faultMessage ?? (cause instanceof Error ? cause.message : '');
  const tail = [d.requestId ? `request ${d.requestId}` : '', d.attempts > 1 ? `${d.attempts} attempts` : ''].filter(Boolean).join(', ');
  return `${d.service} ${d.method} ${d.path}: ${what}${why ? `: ${why}` : ''}${tail ? ` (${tail})` : ''}`;
}

export function codeForStatus(status: number): ErrorCode {
  if (status === 404) return 'E_NOT_FOUND';
  if (status === 409 || status === 412) return 'E_CONFLICT';
  return 'E_HTTP';
}

export interface Fault {
  type?: string;
  message?: string;
}

/** Reads the fault out of the body shapes the services use; text bodies give their first line. */
export function parseFault(body: string): Fault {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    const text = body
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    return text ? { message: text.slice(0, 300) } : {};
  }
  if (!doc || typeof doc !== 'object') return {};
  const o = doc as Record<string, unknown>;
  const neutron = o.NeutronError as { type?: string; message?: string } | undefined;
  if (neutron && typeof neutron === 'object') return { type: neutron.type, message: neutron.message };
  const keystone = o.error as { title?: string; message?: string } | undefined;
  if (keystone && typeof keystone === 'object') return { type: keystone.title, message: keystone.message };
  if (typeof o.faultstring === 'string') return { type: typeof o.faultcode === 'string' ? o.faultcode : undefined, message: o.faultstring };
  // Nova and Cinder: {"itemNotFound": {"code": 404, "message": "..."}}
  const keys = Object.keys(o);
  if (keys.length === 1) {
    const inner = o[keys[0]!] as { message?: unknown } | undefined;
    if (inner && typeof inner === 'object' && typeof inner.message === 'string') return { type: keys[0], message: inner.message };
  }
  return {};
}

export function isOpenStackError(err: unknown, status?: number, faultType?: string): err is OpenStackError {
  return err instanceof OpenStackError && (status === undefined || err.status === status) && (faultType === undefined || err.faultType === faultType);
}
