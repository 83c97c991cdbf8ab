// npm run build: the bundle is self-contained (runs from a directory with no node_modules), imports
// Node's built-ins only through require (an ES import would run their lazy getters), and keeps each
// mode's libraries out of the others' static imports.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { execCommand } from '../src/sys/exec.ts';
import { buildDist } from '../scripts/build.ts';

const out = await mkdtemp(join(tmpdir(), 'kw-build-'));
after(() => rm(out, { recursive: true, force: true }));
await buildDist({ outdir: out });
const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

test('the build runs from a directory without node_modules', async () => {
  const version = await execCommand([process.execPath, join(out, 'main.js'), '--version'], { timeoutMs: 20_000 });
  assert.equal(version.stdout.trim(), pkg.version);
  const help = await execCommand([process.execPath, join(out, 'main.js'), 'operator', '--help'], { timeoutMs: 20_000 });
  assert.match(help.stdout, /Usage: kubeward operator/, 'the operator chunk with the Kubernetes client loads');
  assert.equal(JSON.parse(await readFile(join(out, 'package.json'), 'utf8')).type, 'module');
});

test("the build parses a config file in the YAML parser's process (dist/yaml-to-json.js), which no daemon chunk imports", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-build-cfg-'));
  after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'watch.yaml');
  await writeFile(file, 'vip: [10.0.0.1]\nintervall: 2s\n');
  const run = () => execCommand([process.execPath, join(out, 'main.js'), 'watch', '--config', file], { timeoutMs: 20_000, okCodes: [2] });
  const r = await run();
  assert.equal(r.code, 2);
  assert.match(r.stderr, /watch\.yaml: unknown key "intervall"/, 'the file was parsed, then checked');
  await writeFile(file, 'vip: [10.0.0.1\n');
  assert.match((await run()).stderr, /watch\.yaml: not valid YAML: YAML syntax error at line/);
  const meta = JSON.parse(await readFile(join(out, 'meta.json'), 'utf8')) as {
    outputs: Record<string, { entryPoint?: string; inputs: Record<string, unknown> }>;
  };
  const parser = Object.keys(meta.outputs).find((k) => meta.outputs[k]!.entryPoint === 'src/config/yaml-to-json.ts');
  assert.equal(parser && basename(parser), 'yaml-to-json.js');
  for (const [k, o] of Object.entries(meta.outputs)) {
    if (k === parser || !Object.keys(o.inputs).includes('src/config/load-config.ts')) continue;
    assert.ok(!Object.keys(o.inputs).some((i) => i.includes('node_modules/yaml/')), `${k}: load-config's chunk carries yaml`);
  }
});

test('no chunk imports a Node built-in as an ES module (node:module for require aside)', async () => {
  const files = [join(out, 'main.js'), ...(await readdir(join(out, 'chunks'))).filter((f) => f.endsWith('.js')).map((f) => join(out, 'chunks', f))];
  let found = 0;
  for (const f of files) {
    const text = await readFile(f, 'utf8');
    const specifiers = [...text.matchAll(/(?:^|[;}\n])\s*(?:import|export)\s*(?:[\w$*{}\s,]+?\s*from\s*)?["']([^"']+)["']/g)].map((m) => m[1]!);
    assert.deepEqual(
      specifiers.filter((x) => !x.startsWith('./') && !x.startsWith('../') && x !== 'node:module'),
      [],
      f,
    );
    found += specifiers.length;
  }
  assert.ok(found > files.length, `the import statements were found (${found})`);
});

test("the proxy's static imports carry neither the Kubernetes client nor the controllers", async () => {
  const meta = JSON.parse(await readFile(join(out, 'meta.json'), 'utf8')) as {
    outputs: Record<string, { entryPoint?: string; imports: Array<{ path: string; kind: string }>; inputs: Record<string, unknown> }>;
  };
  const proxyChunk = Object.keys(meta.outputs).find((k) => meta.outputs[k]!.entryPoint === 'src/cli/proxy.ts');
  assert.ok(proxyChunk, 'src/cli/proxy.ts is a chunk of its own');
  const seen = new Set<string>();
  const walk = (k: string): void => {
    if (seen.has(k)) return;
    seen.add(k);
    for (const i of meta.outputs[k]?.imports ?? []) if (i.kind === 'import-statement') walk(i.path);
  };
  walk(proxyChunk);
  const inputs = [...seen].flatMap((k) => Object.keys(meta.outputs[k]?.inputs ?? {}));
  assert.ok(inputs.includes('src/proxy/start-proxy.ts'));
  assert.deepEqual(
    inputs.filter((i) => /@kubernetes\/client-node|src\/controllers\/|src\/clients\//.test(i)),
    [],
  );
});

test("the daemons' static imports leave out what their steady state never uses (docs/footprint.md)", async () => {
  const meta = JSON.parse(await readFile(join(out, 'meta.json'), 'utf8')) as {
    outputs: Record<string, { entryPoint?: string; imports: Array<{ path: string; kind: string }>; inputs: Record<string, unknown> }>;
  };
  const mainChunk = Object.keys(meta.outputs).find((k) => meta.outputs[k]!.entryPoint === 'src/cli/main.ts')!;
  for (const mode of ['proxy', 'watch', 'routes', 'agent']) {
    const chunk = Object.keys(meta.outputs).find((k) => meta.outputs[k]!.entryPoint === `src/cli/${mode}.ts`);
    assert.ok(chunk, `src/cli/${mode}.ts is a chunk of its own`);
    const seen = new Set<string>();
    const walk = (k: string): void => {
      if (seen.has(k)) return;
      seen.add(k);
      for (const i of meta.outputs[k]?.imports ?? []) if (i.kind === 'import-statement') walk(i.path);
    };
    walk(mainChunk);
    walk(chunk);
    const inputs = [...seen].flatMap((k) => Object.keys(meta.outputs[k]?.inputs ?? {}));
    assert.ok(inputs.includes(`src/cli/${mode}.ts`), mode);
    // yaml: loaded by readConfigFile only when there is a file. prom-client: replaced by
    // src/admin/metrics.ts. node:assert (sonic-boom), worker_threads (pino) and perf_hooks: left out
    // or replaced by scripts/build.ts. Each of them, back in a daemon's static imports, costs memory at rest.
    const unwanted = /node_modules\/yaml\/|node_modules\/prom-client\/|tdigest|bintrees|^kubeward-builtin:node:(assert|worker_threads|perf_hooks)$/;
    assert.deepEqual(
      inputs.filter((i) => unwanted.test(i)),
      [],
      `${mode}: loaded at start although the steady state never uses it`,
    );
  }
});
