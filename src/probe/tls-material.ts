// Checks of the material a probe brings itself: PEM CA bundles, client certificate and key, bearer
// tokens. Run at load (start-up and reload) so bad material is a usage error, not a crash, and at
// probe time for the token file, which is re-read on every probe.
import { X509Certificate } from 'node:crypto';
import { describeError } from '../base/errors.ts';
import { nodeTls } from '../base/lazy-builtins.ts';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** Why a CA bundle is unusable, or undefined: it must hold at least one certificate, each one parsing. */
export function caBundleProblem(pem: string): string | undefined {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) return 'holds no certificate (expected PEM "BEGIN CERTIFICATE" blocks)';
  for (const [i, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch {
      return `certificate ${i + 1} of ${blocks.length} does not parse`;
    }
  }
  return undefined;
}

/** Why a client certificate and key cannot be used together, or undefined. */
export function clientPairProblem(cert: string, key: string): { key: 'cert' | 'key'; problem: string } | undefined {
  if (!/-----BEGIN [A-Z ]*CERTIFICATE-----/.test(cert)) return { key: 'cert', problem: 'holds no PEM certificate' };
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key)) return { key: 'key', problem: 'holds no PEM private key' };
  try {
    nodeTls().createSecureContext({ cert, key });
  } catch (err) {
    // OpenSSL's words (key values mismatch, unsupported, bad decrypt), never the PEM text.
    return { key: 'key', problem: `cannot be used with the certificate (${oneLine(describeError(err))})` };
  }
  return undefined;
}

export type TokenCheck = { ok: true; token: string } | { ok: false; problem: string };

/**
 * A bearer token file's content: one line of visible ASCII (a trailing newline is fine). Anything
 * else would make an invalid Authorization header, which Node refuses by throwing.
 */
export function checkToken(text: string): TokenCheck {
  const token = text.trim();
  if (token === '') return { ok: false, problem: 'is empty' };
  if (/[\r\n]/.test(token)) return { ok: false, problem: `holds ${token.split(/\r?\n/).length} lines; a token is one line` };
  if (!/^[\x21-\x7e]+$/.test(token)) return { ok: false, problem: 'holds spaces or characters a bearer token cannot have' };
  return { ok: true, token };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').slice(0, 200);
}
