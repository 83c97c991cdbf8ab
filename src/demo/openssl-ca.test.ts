// The CA's directory has one owner: a directory the CA made is removed by its close(), which a
// second caller joins; a directory the caller passed in stays for the caller to remove.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestCa } from './openssl-ca.ts';

test('close() removes the directory the CA made, once, and a second caller gets the same completion', async () => {
  const ca = await createTestCa('kw-close-test');
  const server = await ca.issueServer('server', ['DNS:localhost']);
  assert.ok(existsSync(server.certFile));
  const [first, second] = [ca.close(), ca.close()];
  assert.equal(first, second, 'one removal, joined');
  await first;
  assert.equal(existsSync(ca.dir), false);
});

test('close() leaves a directory the caller passed in, and what the CA wrote there', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-ca-owner-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const ca = await createTestCa('kw-kept', dir);
  await ca.close();
  assert.ok(existsSync(ca.certFile), 'the caller owns the directory');
});
