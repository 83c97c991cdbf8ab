// Field types shared by every mode's config schema. Each accepts what a YAML file holds and what a
// flag gives (always a string), and says in its error what a good value looks like.
import { isIP } from 'node:net';
import { z } from 'zod';
import { LOG_LEVELS } from '../base/logger.ts';
import { parseDuration } from '../base/duration.ts';

// Schemas are checked a few times per process (start, reload): zod's JIT, which compiles each
// object schema with new Function, costs more memory than it saves time here.
z.config({ jitless: true });

/** A duration such as "500ms", "2s", "1m"; parsed to milliseconds. */
export function duration(opts: { min?: number } = {}) {
  return z.string({ error: 'expected a duration such as 500ms, 2s or 1m' }).transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === undefined) {
      ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration; write it like 500ms, 2s or 1m` });
      return z.NEVER;
    }
    if (opts.min !== undefined && ms < opts.min) {
      ctx.addIssue({ code: 'custom', message: `${text} is too short; the least accepted is ${opts.min}ms` });
      return z.NEVER;
    }
    return ms;
  });
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

export const ipAddress = z
  .string()
  .refine((s) => isIP(s) !== 0, { error: (iss) => `"${String(iss.input)}" is not an IPv4 or IPv6 address` });

export interface HostPort {
  host: string;
  port: number;
}

/** HOST:PORT, with IPv6 hosts in brackets ("[::1]:6443"). */
export function parseHostPort(text: string): HostPort | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port < 0 || port > 65535) return undefined;
  const host = m[1] ?? m[2]!;
  if (m[1] !== undefined && isIP(host) !== 6) return undefined;
  return { host, port };
}

export function formatHostPort(hp: HostPort): string {
  return isIP(hp.host) === 6 ? `[${hp.host}]:${hp.port}` : `${hp.host}:${hp.port}`;
}

export const hostPort = z.string().transform((text, ctx) => {
  const hp = parseHostPort(text);
  if (!hp) {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not HOST:PORT (IPv6 in brackets, like [::1]:6443)` });
    return z.NEVER;
  }
  return hp;
});

/** --admin-address: HOST:PORT, or "off". */
export const adminAddress = z.union([z.literal('off'), hostPort], {
  error: 'expected HOST:PORT (like 127.0.0.1:9450) or off',
});

export const commonFields = {
  logFormat: z.enum(['json', 'text'], { error: 'expected json or text' }).default('json'),
  logLevel: z.enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` }).default('info'),
};
