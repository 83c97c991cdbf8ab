// The native relay's build (scripts/build-native.ts): the addon compiles with -Werror against the
// running Node's headers and loads into a Node process of its own; a missing or failing compiler is
// reported as a value (npm run build goes on and the proxy falls back), and leaves no file behind.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execCommand } from '../src/sys/exec.ts';
import { buildNative, compilerArgs, nodeIncludeDir } from '../scripts/build-native.ts';

const dir = await mkdtemp(join(tmpdir(), 'kw-build-native-'));
after(() => rm(dir, { recursive: true, force: true }));

test("the addon builds with the running Node's headers and loads in a fresh process", async () => {
  const include = nodeIncludeDir();
  assert.ok(include !== undefined && existsSync(join(include, 'node_api.h')), 'headers found');
  assert.ok(compilerArgs(include, 'x.node').includes('-Werror'), 'warnings are errors');
  const out = join(dir, 'sub', 'relay.node');
  const built = await buildNative(out);
  assert.deepEqual(built, { ok: true, path: out });
  const script = `const m={exports:{}};process.dlopen(m,${JSON.stringify(out)});console.log(typeof m.exports.open, m.exports.init(()=>{},65536))`;
  const r = await execCommand([process.execPath, '-e', script], { timeoutMs: 20_000 });
  const [open, structBytes] = r.stdout.trim().split(' ');
  assert.equal(open, 'function');
  assert.ok(Number(structBytes) > 0 && Number(structBytes) <= 512, `the C state per connection stays small (${structBytes} bytes)`);
});

test('a missing or failing compiler is a reason, not a throw, and leaves no file', async () => {
  const out = join(dir, 'none', 'relay.node');
  const missing = await buildNative(out, { cc: join(dir, 'no-such-cc') });
  assert.equal(missing.ok, false);
  assert.match((missing as { why: string }).why, /no C compiler .* on PATH/);
  const failing = await buildNative(out, { cc: 'false' });
  assert.match((failing as { why: string }).why, /false failed: exit code 1/);
  assert.deepEqual(await readdir(join(dir, 'none')), [], 'neither the addon nor a temporary file');
});
