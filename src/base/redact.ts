// Secrets never leave the process through /status or a log line: values under known secret keys
// are replaced, and userinfo in URLs is dropped. One home for the list of keys.

/** Keys (compared case-insensitively, without - and _) whose values are secrets. */
const SECRET_KEYS = new Set([
  'password',
  'passwd',
  'token',
  'bearertoken',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'secret',
  'clientsecret',
  'applicationcredentialsecret',
  'authorization',
  'apikey',
  'privatekey',
  'clientkeydata',
  'tokendata',
  'credentials',
]);

export const REDACTED = '[redacted]';

export function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(key.toLowerCase().replace(/[-_]/g, ''));
}

/** https://user:pass@host/ → https://host/ (any scheme://userinfo@ in a string). */
export function stripUserinfo(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/gi, '$1');
}

/** A deep copy with secret values replaced and URL userinfo removed from every string. */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return stripUserinfo(value);
  if (value === null || typeof value !== 'object' || depth > 32) return value;
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1));
  if (value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = isSecretKey(k) && v !== null && v !== undefined && v !== '' ? REDACTED : redactSecrets(v, depth + 1);
  return out;
}
