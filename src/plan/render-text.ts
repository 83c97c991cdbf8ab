// Small text helpers shared by the renderers: addresses in config syntax, YAML scalars, and the
// checksum annotation that makes a static pod restart when its config changes.
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';

/** "10.0.0.1:6443", "[::1]:6443": the form nginx, HAProxy and kubeward all accept. */
export function formatAddress(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A YAML double-quoted string (JSON strings are valid YAML). */
export function quote(s: string): string {
  return JSON.stringify(s);
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
