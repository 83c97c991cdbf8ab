// Logging: pino, JSON lines by default, a compact "time LEVEL msg key=value" form for people.
import { pino, type Logger, type DestinationStream } from 'pino';
import { redactSecrets } from './redact.ts';

export type { Logger } from 'pino';
export type LogFormat = 'json' | 'text';
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  format: LogFormat;
  level: LogLevel;
  /** Where lines go; default stderr, so that stdout stays free for command output. */
  write?: (line: string) => void;
  /** Extra fields on every line (the mode, for example). */
  base?: Record<string, unknown>;
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const RESERVED = new Set(['level', 'time', 'msg', 'pid', 'hostname']);

/** Turns one pino JSON line into the text form. Exported for its test. */
export function formatTextLine(json: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof rec.time === 'number' ? new Date(rec.time).toISOString() : '';
  const level = LEVEL_NAMES[rec.level as number] ?? String(rec.level);
  const fields = Object.entries(rec)
    .filter(([k]) => !RESERVED.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' && !/[\s"=]/.test(v) ? v : JSON.stringify(v)}`);
  return `${time} ${level.padEnd(5)} ${String(rec.msg ?? '')}${fields.length ? ' ' + fields.join(' ') : ''}\n`;
}

export function createLogger(opts: LoggerOptions): Logger {
  const write = opts.write ?? ((line: string) => process.stderr.write(line));
  const dest: DestinationStream = {
    write: opts.format === 'text' ? (line: string) => write(formatTextLine(line)) : write,
  };
  return pino(
    {
      level: opts.level,
      base: { pid: process.pid, ...opts.base },
      timestamp: pino.stdTimeFunctions.epochTime,
      // Every line's fields pass through the one redaction (secret keys, URL userinfo).
      formatters: { level: (_label, number) => ({ level: number }), log: (fields) => redactSecrets(fields) as Record<string, unknown> },
    },
    dest,
  );
}

/**
 * An info line written whatever --log-level says (a silent logger stays silent): where a daemon
 * bound a port given as 0, which its supervisor and the tests read from the log.
 */
export function infoAtAnyLevel(log: Logger, fields: Record<string, unknown>, msg: string): void {
  if (log.level === 'silent' || log.isLevelEnabled('info')) log.info(fields, msg);
  else log.child({}, { level: 'info' }).info(fields, msg);
}

/** A logger that drops everything, for unit tests and library use. */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}
