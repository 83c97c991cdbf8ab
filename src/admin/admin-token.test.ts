import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { bearerMatches, loadAdminToken, tokenModeProblem } from './admin-token.ts';

const REG = 0o100000;

test('a missing token file is created with mode 0600 and a random token; an existing one is read', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kubeward-token-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'admin-token');
  const token = await loadAdminToken(path);
  assert.match(token, /^[0-9a-f]{64}$/);
  assert.equal((await stat(path)).mode & 0o777, 0o600);
  assert.equal(await loadAdminToken(path), token, 'read back, not replaced');
  assert.notEqual(await loadAdminToken(join(dir, 'other')), token, 'each file its own random token');
});

test('a token file others can read, a short token or a missing directory is a usage error naming the flag', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kubeward-token-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'admin-token');
  await writeFile(path, 'x'.repeat(40) + '\n', { mode: 0o644 });
  await chmod(path, 0o644);
  await assert.rejects(loadAdminToken(path), (e: Error) => /--admin-token-file .* has mode 0644, .*chmod 600/.test(e.message));
  await writeFile(path, 'short\n');
  await chmod(path, 0o600);
  await assert.rejects(loadAdminToken(path), /5-character token; use at least 32/);
  await assert.rejects(loadAdminToken(join(dir, 'no', 'such')), /cannot create it .*ENOENT/);
  await assert.rejects(loadAdminToken(dir), /is not a regular file/);
  assert.equal(await readFile(path, 'utf8'), 'short\n', 'never overwritten');
});

test('property: a token file mode is accepted exactly when it is a regular file without group or other bits', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 0o777 }), fc.boolean(), (perm, regular) => {
      const ok = tokenModeProblem((regular ? REG : 0o040000) | perm) === undefined;
      assert.equal(ok, regular && (perm & 0o077) === 0);
    }),
  );
});

test('property: only the exact token in a Bearer header matches', () => {
  fc.assert(
    fc.property(fc.stringMatching(/^[\x21-\x7e]{32,64}$/), fc.string(), (token, other) => {
      assert.equal(bearerMatches(`Bearer ${token}`, token), true);
      assert.equal(bearerMatches(token, token), false);
      assert.equal(bearerMatches(undefined, token), false);
      if (other !== token) assert.equal(bearerMatches(`Bearer ${other}`, token), false);
    }),
  );
});
