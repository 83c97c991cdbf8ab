// Field types shared by every mode's config schema. Each accepts what a YAML file holds and what a
// flag gives (always a string), and says in its error what a good value looks like.
import { isIP } from 'node:net';
import { z } from 'zod';
import { LOG_LEVELS } from '../base/logger.ts';
import { MAX_TIMER_MS, formatDuration, parseDuration } from '../base/duration.ts';

// Schemas are checked a few times per process (start, reload): zod's JIT, which compiles each
// object schema with new Function, costs more memory than it saves time here.
z.config({ jitless: true });

/** Every duration is at most this long unless its field says otherwise (documented in the README). */
export const DEFAULT_MAX_DURATION_MS = 24 * 3_600_000;

/**
 * A duration such as "500ms", "2s", "1m"; parsed to milliseconds. The range is [min, max]: min
 * defaults to 0, max to 24h and can never exceed MAX_TIMER_MS (Node's timer limit).
 */
export function duration(opts: { min?: number; max?: number } = {}) {
  const max = Math.min(opts.max ?? DEFAULT_MAX_DURATION_MS, MAX_TIMER_MS);
  return z.string({ error: 'expected a duration such as 500ms, 2s or 1m' }).transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === undefined) {
      ctx.addIssue({ code: 'custom', message: `${quote(text)} is not a duration; write it like 500ms, 2s or 1m` });
      return z.NEVER;
    }
    if (opts.min !== undefined && ms < opts.min) {
      ctx.addIssue({ code: 'custom', message: `${plain(text)} is too short; the least accepted is ${formatDuration(opts.min)}` });
      return z.NEVER;
    }
    if (ms > max) {
      ctx.addIssue({ code: 'custom', message: `${plain(text)} is too long; the most accepted is ${formatDuration(max)}` });
      return z.NEVER;
    }
    return ms;
  });
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
  return z
    .union([z.number(), z.string().regex(/^-?\d+$/, 'expected a whole number').transform(Number)], {
      error: 'expected a whole number',
    })
    .pipe(z.number().int(`expected a whole number`).min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
}

/** true/false from YAML, or the flag pair --x / --no-x. */
export const boolean = z.boolean({ error: 'expected true or false' });

/** Why an IP address is refused, or undefined for a plain IPv4 or IPv6 address (no zone id). */
export function ipAddressProblem(text: string): string | undefined {
  if (isIP(text.split('%')[0]!) === 6 && text.includes('%')) return `${quote(text)} has a zone id (%...); give an address without one`;
  if (isIP(text) === 0) return `${quote(text)} is not an IPv4 or IPv6 address`;
  return undefined;
}

export const ipAddress = z.string().superRefine((s, ctx) => {
  const problem = ipAddressProblem(s);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

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
  return z.string().transform((text, ctx) => {
    const r = checkHostPort(text, minPort);
    if ('problem' in r) {
      ctx.addIssue({ code: 'custom', message: r.problem });
      return z.NEVER;
    }
    return r;
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
  return z
    .string({ error: `expected ${what}` })
    .min(1, `expected ${what}`)
    .max(4096, `expected ${what} of at most 4096 characters`)
    .refine((p) => !hasControlCharacters(p), { error: `expected ${what} without control characters (newline, tab, ...)` });
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
export const adminAddress = z.union([z.literal('off'), hostPort], {
  error: 'expected HOST:PORT (like 127.0.0.1:9450) or off',
});

export const commonFields = {
  logFormat: z.enum(['json', 'text'], { error: 'expected json or text' }).default('json'),
  logLevel: z.enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` }).default('info'),
};
