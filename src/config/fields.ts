// Field types shared by every mode's config schema. Each accepts what a YAML file holds and what a
// flag gives (always a string), and says in its error what a good value looks like.
import { isIP } from 'node:net';
// zod/mini with named imports: the daemons' schemas use a few builders, and esbuild leaves the
// rest of zod out of the build. zod's classic API (`z.string().optional()`) attaches every method
// to every schema, so importing any of it loads and initialises all of it: about 7 MiB RSS and
// 8 MiB private memory more at rest (docs/footprint.md).
import {
  _default,
  boolean as zBoolean,
  config,
  enum as zEnum,
  int,
  literal,
  maxLength,
  maximum,
  minLength,
  minimum,
  NEVER,
  number,
  optional,
  pipe,
  refine,
  regex,
  string,
  superRefine,
  transform,
  union,
} from 'zod/mini';
import type { output, ZodMiniPipe, ZodMiniString, ZodMiniTransform, ZodMiniType } from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { LOG_LEVELS } from '../base/logger.ts';
import { MAX_TIMER_MS, formatDuration, parseDuration } from '../base/duration.ts';

// English messages (classic zod sets them on import; zod/mini leaves that to the program: without
// them every message is "Invalid input"). Schemas are checked a few times per process (start,
// reload): zod's JIT, which compiles each object schema with new Function, costs more memory than
// it saves time here.
config({ ...en(), jitless: true });

/** A value refused by a field's reader, with the problem in words. */
export class Refused {
  readonly problem: string;
  constructor(problem: string) {
    this.problem = problem;
  }
}

/** A field whose input (as `input` accepts it) is read by `read`, which returns the value or a Refused. */
export function readWith<I extends ZodMiniType, O>(input: I, read: (value: output<I>) => O | Refused): ZodMiniPipe<I, ZodMiniTransform<Awaited<O>, output<I>>> {
  return pipe(
    input,
    transform((value: output<I>, payload) => {
      const r = read(value);
      if (r instanceof Refused) {
        payload.issues.push({ code: 'custom', message: r.problem, input: value });
        return NEVER;
      }
      return r;
    }),
  );
}

/** A text field read by `read`; `error` is the message for a value that is not text. */
export function textField<O>(read: (text: string) => O | Refused, error?: string): ZodMiniPipe<ZodMiniString<string>, ZodMiniTransform<Awaited<O>, string>> {
  return readWith(string(error === undefined ? undefined : { error }), read);
}

/** Every duration is at most this long unless its field says otherwise (documented in docs/common.md). */
export const DEFAULT_MAX_DURATION_MS = 24 * 3_600_000;

/**
 * A duration such as "500ms", "2s", "1m"; parsed to milliseconds. The range is [min, max]: min
 * defaults to 0, max to 24h and can never exceed MAX_TIMER_MS (Node's timer limit).
 */
export function duration(opts: { min?: number; max?: number } = {}) {
  const max = Math.min(opts.max ?? DEFAULT_MAX_DURATION_MS, MAX_TIMER_MS);
  const rangeText = `${formatBound(opts.min ?? 0)}–${formatBound(max)}`;
  return withRange(
    rangeText,
    textField((text): number | Refused => {
      const ms = parseDuration(text);
      if (ms === undefined) {
        return new Refused(`${quote(text)} is not a duration; write it like 500ms, 2s or 1m`);
      }
      if (opts.min !== undefined && ms < opts.min) {
        return new Refused(`${plain(text)} is too short; the least accepted is ${formatDuration(opts.min)}`);
      }
      if (ms > max) {
        return new Refused(`${plain(text)} is too long; the most accepted is ${formatDuration(max)}`);
      }
      return ms;
    }, 'expected a duration such as 500ms, 2s or 1m'),
  );
}

/** Where a field built by duration() or integer() keeps its accepted range, on the schema object itself. */
const RANGE = Symbol('kubeward accepted range');

function withRange<T extends object>(rangeText: string, schema: T): T {
  Object.defineProperty(schema, RANGE, { value: rangeText });
  return schema;
}

/** A duration bound as the docs write it: 0, 100ms, 5m. */
function formatBound(ms: number): string {
  return ms === 0 ? '0' : formatDuration(ms);
}

/**
 * The accepted range of a field built by duration() or integer() ("100ms–1h", "1–100"), looking
 * through optional and default wrappers; undefined for other fields. For the docs' flag tables.
 */
export function rangeOf(field: unknown): string | undefined {
  let f = field as { _zod?: { def?: { innerType?: unknown } }; [RANGE]?: string } | undefined;
  for (let i = 0; i < 8 && f; i++) {
    const range = f[RANGE];
    if (range !== undefined) return range;
    f = f._zod?.def?.innerType as typeof f;
  }
  return undefined;
}

/** A value shown as typed when it is a plain word (500ms, 1000h), quoted and escaped otherwise. */
function plain(text: string): string {
  return /^[\w.]{1,80}$/.test(text) ? text : quote(text);
}

/** A value as it may appear inside a one-line message: quoted, control characters escaped, cut at 80 characters. */
export function quote(text: string): string {
  // JSON.stringify escapes every control character but leaves U+2028/U+2029, which some log
  // readers break lines on.
  return JSON.stringify(text.length > 80 ? text.slice(0, 80) + '…' : text).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

/** A whole number in [min, max], from YAML or from a flag's string. */
export function integer(min: number, max: number) {
  return withRange(
    `${min}–${max}`,
    pipe(
      union([number(), pipe(string().check(regex(/^-?\d+$/, 'expected a whole number')), transform(Number))], { error: 'expected a whole number' }),
      int('expected a whole number').check(minimum(min, `must be at least ${min}`), maximum(max, `must be at most ${max}`)),
    ),
  );
}

/** true/false from YAML, or the flag pair --x / --no-x. */
export const boolean = zBoolean({ error: 'expected true or false' });

/** Why an IP address is refused, or undefined for a plain IPv4 or IPv6 address (no zone id). */
export function ipAddressProblem(text: string): string | undefined {
  if (isIP(text.split('%')[0]!) === 6 && text.includes('%')) return `${quote(text)} has a zone id (%...); give an address without one`;
  if (isIP(text) === 0) return `${quote(text)} is not an IPv4 or IPv6 address`;
  return undefined;
}

export const ipAddress = string().check(
  superRefine((s: string, ctx) => {
    const problem = ipAddressProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
);

export interface HostPort {
  host: string;
  port: number;
}

/** An RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens, the last not all digits. */
export function isHostName(text: string): boolean {
  if (text.length === 0 || text.length > 253) return false;
  const labels = text.replace(/\.$/, '').split('.');
  if (/^\d+$/.test(labels.at(-1)!)) return false;
  return labels.every((l) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i.test(l));
}

/**
 * HOST:PORT, with IPv6 hosts in brackets ("[::1]:6443"). The host is an IPv4 address, a bracketed
 * IPv6 address without a zone id, or an RFC 1123 name; the port 0 to 65535 (1 to 65535 with
 * minPort 1). Returns the value, or the problem in words.
 */
export function checkHostPort(text: string, minPort = 0): HostPort | { problem: string } {
  const m = /^(?:\[([^\]]*)\]|([^:[\]]*)):(\d{1,5})$/.exec(text);
  if (!m) return { problem: `${quote(text)} is not HOST:PORT (IPv6 in brackets, like [::1]:6443)` };
  const port = Number(m[3]);
  if (port > 65535 || port < minPort) return { problem: `${quote(text)}: the port must be from ${minPort} to 65535` };
  if (m[1] !== undefined) {
    const problem = isIP(m[1].split('%')[0]!) === 6 ? ipAddressProblem(m[1]) : `${quote(text)}: only IPv6 addresses go in brackets`;
    return problem ? { problem } : { host: m[1], port };
  }
  const host = m[2]!;
  if (isIP(host) === 4 || isHostName(host)) return { host, port };
  return { problem: `${quote(text)}: the host must be an IPv4 address, [IPv6] or a DNS name` };
}

/** HOST:PORT as checkHostPort reads it, or undefined. */
export function parseHostPort(text: string): HostPort | undefined {
  const r = checkHostPort(text);
  return 'problem' in r ? undefined : r;
}

export function formatHostPort(hp: HostPort): string {
  return isIP(hp.host) === 6 ? `[${hp.host}]:${hp.port}` : `${hp.host}:${hp.port}`;
}

function hostPortField(minPort: number) {
  return textField((text): HostPort | Refused => {
    const r = checkHostPort(text, minPort);
    return 'problem' in r ? new Refused(r.problem) : r;
  });
}

/** HOST:PORT to listen on (port 0: any free port). */
export const hostPort = hostPortField(0);
/** HOST:PORT to connect to: port 0 is refused. */
export const upstreamHostPort = hostPortField(1);

/**
 * A file or directory path: non-empty, without control characters (a newline would split the
 * config line or log line it lands in). Relative paths are resolved against the working directory
 * by the code that uses them, so a name like "--help" can never be read as an option.
 */
export function filePath(what = 'a file path') {
  return string({ error: `expected ${what}` }).check(
    minLength(1, `expected ${what}`),
    maxLength(4096, `expected ${what} of at most 4096 characters`),
    refine((p: string) => !hasControlCharacters(p), { error: `expected ${what} without control characters (newline, tab, ...)` }),
  );
}

/** Any character below U+0020, or DEL: they split lines, config entries and log records. */
export function hasControlCharacters(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** --admin-address: HOST:PORT, or "off". */
export const adminAddress = union([literal('off'), hostPort], {
  error: 'expected HOST:PORT (like 127.0.0.1:9450) or off',
});

export const commonFields = {
  logFormat: _default(zEnum(['json', 'text'], { error: 'expected json or text' }), 'json'),
  logLevel: _default(zEnum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` }), 'info'),
  /** --admin-token-file: the token /status and the control routes ask for (src/admin/admin-token.ts). */
  adminTokenFile: optional(filePath('a token file path')),
  /** --metrics-address and its TLS and apiserver (src/cli/metrics-listener.ts). */
  metricsAddress: optional(union([literal('off'), hostPort], { error: 'expected HOST:PORT (like 10.0.0.5:9462) or off' })),
  metricsTlsCertFile: optional(filePath('a PEM certificate file path')),
  metricsTlsKeyFile: optional(filePath('a PEM key file path')),
  metricsKubeconfig: optional(filePath('a kubeconfig path')),
};
