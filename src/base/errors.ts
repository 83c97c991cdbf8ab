// Errors with stable codes: one base class, a code per failure, the cause always kept.

export type ErrorCode =
  | 'E_USAGE' // bad flag, bad config value: the process exits 2
  | 'E_CONFIG' // a config file that cannot be read or parsed
  | 'E_LOCK_TIMEOUT'
  | 'E_IO'
  | 'E_EXEC'
  | 'E_STATE'
  | 'E_CLOSED'
  | 'E_TIMEOUT'
  | 'E_UPSTREAM'
  | 'E_HTTP'
  | 'E_NOT_FOUND'
  | 'E_CONFLICT';

export class KubewardError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KubewardError';
    this.code = code;
  }
}

/** A mistake in how kubeward was called or configured. The CLI prints the message and exits 2. */
export class UsageError extends KubewardError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('E_USAGE', message, options);
    this.name = 'UsageError';
  }
}

export function isKubewardError(err: unknown, code?: ErrorCode): err is KubewardError {
  return err instanceof KubewardError && (code === undefined || err.code === code);
}

/** The message of anything thrown, for logs; Node system errors keep their errno code in front. */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code !== undefined && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}
