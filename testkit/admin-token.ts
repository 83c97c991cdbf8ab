// An admin token file for tests that read /status or call drain/undrain: a 0600 file in a fresh
// temporary directory, the flags that point kubeward at it and the header that carries it.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface AdminTokenFixture {
  path: string;
  token: string;
  /** ['--admin-token-file', path] */
  args: string[];
  /** { authorization: 'Bearer …' } */
  headers: Record<string, string>;
}

export function adminTokenFixture(): AdminTokenFixture {
  const path = join(mkdtempSync(join(tmpdir(), 'kubeward-admin-')), 'admin-token');
  const token = randomBytes(24).toString('hex');
  writeFileSync(path, token + '\n', { mode: 0o600 });
  return { path, token, args: ['--admin-token-file', path], headers: { authorization: `Bearer ${token}` } };
}
