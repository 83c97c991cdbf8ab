// The admin token: what /status and the state-changing routes (the proxy's drain and undrain) ask
// for besides a loopback peer. A loopback peer is any process on the node, including every
// hostNetwork pod; the token file's permissions (0600, owner only) narrow that to the daemon's own
// user and root. docs/design/admin-authentication.md says why a token file and not a unix socket.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { open, readFile, stat } from 'node:fs/promises';
import { constants } from 'node:fs';
import { UsageError, describeError } from '../base/errors.ts';
import { checkToken } from '../probe/tls-material.ts';

/** Shortest token accepted from a file: 128 bits written as hex. */
export const ADMIN_TOKEN_MIN_LENGTH = 32;

/** Why a token file's mode is unsafe, or undefined: it must be a regular file no group or other user can touch. */
export function tokenModeProblem(mode: number): string | undefined {
  if ((mode & constants.S_IFMT) !== constants.S_IFREG) return 'is not a regular file';
  const loose = mode & 0o077;
  if (loose !== 0) return `has mode 0${(mode & 0o777).toString(8)}, which lets other users read or change it; chmod 600 it`;
  return undefined;
}

/** The token text's problem, or the token (one line of visible ASCII, long enough to resist guessing). */
export function adminTokenOf(text: string): { ok: true; token: string } | { ok: false; problem: string } {
  const c = checkToken(text);
  if (!c.ok) return c;
  if (c.token.length < ADMIN_TOKEN_MIN_LENGTH)
    return { ok: false, problem: `holds a ${c.token.length}-character token; use at least ${ADMIN_TOKEN_MIN_LENGTH} (openssl rand -hex 16)` };
  return c;
}

/**
 * Reads the token file, creating it (mode 0600, exclusively) with a fresh random token when it does
 * not exist, so a node needs no extra step. Throws UsageError naming the flag on anything unsafe.
 */
export async function loadAdminToken(path: string, flag = '--admin-token-file'): Promise<string> {
  const st = await stat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw new UsageError(`${flag} ${path}: cannot read it (${describeError(err)})`, { cause: err });
  });
  if (!st) await createTokenFile(path, flag);
  else {
    const problem = tokenModeProblem(st.mode);
    if (problem) throw new UsageError(`${flag} ${path} ${problem}`);
  }
  const text = await readFile(path, 'utf8').catch((err: unknown) => {
    throw new UsageError(`${flag} ${path}: cannot read it (${describeError(err)})`, { cause: err });
  });
  const t = adminTokenOf(text);
  if (!t.ok) throw new UsageError(`${flag} ${path} ${t.problem}`);
  return t.token;
}

async function createTokenFile(path: string, flag: string): Promise<void> {
  try {
    const fh = await open(path, 'wx', 0o600);
    try {
      await fh.writeFile(randomBytes(32).toString('hex') + '\n');
    } finally {
      await fh.close();
    }
  } catch (err) {
    // EEXIST: another process created it meanwhile; the read that follows checks it.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw new UsageError(`${flag} ${path}: cannot create it (${describeError(err)}); create its directory or point the flag elsewhere`, { cause: err });
  }
}

/** Whether an Authorization header carries the token (constant time in the token's length). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer ([\x21-\x7e]+)$/.exec(header ?? '');
  if (!m) return false;
  const given = Buffer.from(m[1]!);
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}
