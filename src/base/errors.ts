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

/**
 * The message of anything thrown, for logs and one-line errors: Node system errors keep their errno
 * code in front, and the cause chain is kept ("fetch failed (connect ECONNREFUSED 127.0.0.1:5000)"),
 * so a network error never shrinks to its wrapper's words.
 */
export function describeError(err: unknown, depth = 0): string {
  if (!(err instanceof Error)) return String(err);
  const yaml = describeYamlError(err);
  if (yaml !== undefined) return yaml;
  const code = (err as NodeJS.ErrnoException).code;
  let text = err.message;
  // Happy eyeballs (localhost → ::1 and 127.0.0.1) fails with an AggregateError without a message.
  if (text === '' && err instanceof AggregateError) text = err.errors.map((e) => describeError(e, depth + 1)).join('; ');
  if (code !== undefined && !text.includes(code)) text = `${code}: ${text}`;
  if (err.cause !== undefined && depth < 4) {
    const cause = describeError(err.cause, depth + 1);
    if (cause !== '' && !text.includes(cause)) text += ` (${cause})`;
  }
  return text;
}

/**
 * A YAML syntax error as its reason and position only. Both YAML parsers quote the offending
 * line in their message, which in clouds.yaml or a kubeconfig is often the password or token;
 * line and column are enough to find it. undefined for other errors.
 */
export function describeYamlError(err: Error): string | undefined {
  // yaml (eemeli/yaml): YAMLParseError with code and linePos [{ line, col }].
  const e = err as Error & { code?: unknown; linePos?: { line: number; col: number }[]; mark?: { line: number; column: number }; reason?: unknown };
  if ((err.name === 'YAMLParseError' || err.name === 'YAMLWarning') && Array.isArray(e.linePos)) {
    const pos = e.linePos[0];
    const reason = err.message.split(/ at line \d+|\n/)[0]!.slice(0, 120);
    return `YAML syntax error at line ${pos?.line ?? '?'}, column ${pos?.col ?? '?'}: ${reason}`;
  }
  // js-yaml (inside @kubernetes/client-node): YAMLException with reason and a zero-based mark.
  if (err.name === 'YAMLException' && e.mark && typeof e.mark.line === 'number') {
    return `YAML syntax error at line ${e.mark.line + 1}, column ${e.mark.column + 1}: ${String(e.reason ?? 'invalid YAML').slice(0, 120)}`;
  }
  return undefined;
}
