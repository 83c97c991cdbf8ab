import { isIP } from 'node:net';

// The grammars every inventory value must match before it becomes a file name, a config line or
// a YAML scalar. A value that does not match is refused (exit 2 naming the host and key), never
// escaped: nginx, HAProxy, openssl and /etc/hosts have no common quoting, so only values that need
// none are let through.

/** An IPv4 or IPv6 address without a zone id ("fe80::1%eth0" is a link-local scope, not a node address). */
export function isPlainIp(s: string): boolean {
  return isIP(s) !== 0 && !s.includes('%');
}

/** RFC 1123 host name: dot-separated labels of letters, digits and inner "-", at most 253 long. */
export function isHostName(s: string): boolean {
  return s.length > 0 && s.length <= 253 && s.split('.').every((l) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(l));
}

/** A DNS name as certificates allow it: a host name, optionally with a leading "*." wildcard. */
export function isDnsName(s: string): boolean {
  return isHostName(s.startsWith('*.') ? s.slice(2) : s);
}

/**
 * An absolute path that every config syntax takes as one word and that `plan render` can also write
 * under its output directory (a config directory becomes nodes/<host>/<dir>/...): starts with "/",
 * and each segment is of POSIX's portable filename characters (letters, digits, ".", "_", "-"),
 * starting with a letter, digit or "_". So no whitespace, control or non-ASCII characters, no
 * quotes, braces, ";", "#", "$", "\" or "`" (nginx, HAProxy and YAML meta-characters), no "." or
 * ".." segments and no empty segments.
 */
export function isSafeAbsolutePath(s: string): boolean {
  if (!s.startsWith('/') || s.length > 4096) return false;
  if (s === '/') return true;
  const segments = s.slice(1).replace(/\/$/, '').split('/');
  return segments.every((seg) => PATH_SEGMENT.test(seg));
}

/** One segment of a path the plan writes or names: the same grammar as render-plan's relative paths. */
const PATH_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

// The OCI / docker reference grammar (github.com/distribution/reference, regexp.go).
const ALNUM = '[a-z0-9]+';
const SEPARATOR = '(?:[._]|__|[-]+)';
const PATH_COMPONENT = `${ALNUM}(?:${SEPARATOR}${ALNUM})*`;
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`;
const NAME_RE = new RegExp(`^(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*$`);
const TAG_RE = /^[\w][\w.-]{0,127}$/;
const DIGEST_RE = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;

/** An image repository (name without tag or digest), like docker.io/library/nginx. */
export function isImageRepository(s: string): boolean {
  return s.length <= 255 && NAME_RE.test(s);
}

/** An image tag ("1.30.1-alpine") or a digest ("sha256:<hex>"). */
export function isImageTagOrDigest(s: string): boolean {
  return TAG_RE.test(s) || DIGEST_RE.test(s);
}

/** A full reference "repo:tag", "repo@digest" or "repo:tag@digest". */
export function isImageReference(s: string): boolean {
  const at = s.indexOf('@');
  const [nameTag, digest] = at >= 0 ? [s.slice(0, at), s.slice(at + 1)] : [s, undefined];
  if (digest !== undefined && !DIGEST_RE.test(digest)) return false;
  const m = /^(.*?)(?::([^:/]+))?$/s.exec(nameTag);
  if (m === null) return false;
  if (m[2] !== undefined && !TAG_RE.test(m[2])) return false;
  return isImageRepository(m[1]!);
}

/** A Kubernetes resource quantity as kubespray writes them (25m, 32M, 0.5, 1Gi). */
export function isQuantity(s: string): boolean {
  return /^[+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/.test(s) && s.length <= 32;
}

/** A time as nginx and HAProxy both read it: a number with an optional ms/s/m/h/d unit. */
export function isConfigDuration(s: string): boolean {
  return /^\d{1,9}(?:ms|s|m|h|d)?$/.test(s);
}

/** A Kubernetes object name (RFC 1123 subdomain, lower case), as a static pod name must be. */
export function isObjectName(s: string): boolean {
  return s.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(s);
}

/** A value for a message: JSON-quoted so a line break or control character cannot split the line. */
export function shown(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 80 ? `${text.slice(0, 77)}..."` : text;
}
