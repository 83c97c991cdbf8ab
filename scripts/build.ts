// npm run build: the shipped program in dist/. esbuild bundles src/cli/main.ts with its runtime
// dependencies (dist/ needs no node_modules) into ES modules split per mode, so a mode's chunk and
// its libraries are read only when that mode runs (modes.ts imports each mode dynamically).
// bin/kubeward.js runs dist/main.js; npm run kubeward and the tests keep running the sources.
import { build, type Plugin } from 'esbuild';
import { builtinModules } from 'node:module';
import { rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEV_ADDON, buildNative, type NativeBuild } from './build-native.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = join(ROOT, 'dist');

/**
 * Node's built-in modules through require(), not import. An ES import of a built-in builds a module
 * namespace from every export, which runs the lazy getters: `import from 'node:http'` loads undici
 * for http.WebSocket (about 6 MiB of private memory and 6 MiB of the binary paged in, measured at
 * rest), `node:crypto` loads WebCrypto. require() returns the object and runs no getter.
 */
export const builtinsViaRequire: Plugin = {
  name: 'builtins-via-require',
  setup(b) {
    const names = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
    b.onResolve({ filter: /^(node:)?[a-z_/0-9]+$/ }, (args) => {
      if (!names.has(args.path) || args.namespace === 'kubeward-builtin') return undefined;
      return { path: args.path.startsWith('node:') ? args.path : `node:${args.path}`, namespace: 'kubeward-builtin' };
    });
    b.onLoad({ filter: /.*/, namespace: 'kubeward-builtin' }, (args) => ({
      contents: `module.exports = __kubewardRequire(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/**
 * Parts of the libraries that kubeward never calls, left out of the build so that loading the
 * library does not load them: pino's transports (a worker thread per transport: thread-stream,
 * worker_threads, assert). Calling one of them in the build throws and says so.
 */
export const UNUSED_LIBRARY_PARTS: ReadonlyArray<{ importer: RegExp; path: string; what: string }> = [
  { importer: /node_modules\/pino\/(pino|lib\/tools)\.js$/, path: './lib/transport', what: 'pino.transport()' },
  { importer: /node_modules\/pino\/(pino|lib\/tools)\.js$/, path: './transport', what: 'pino.transport()' },
];

/**
 * Built-ins a library loads for one line that kubeward does not need, replaced in the build by what
 * that line uses (measured at rest with bench/measure-modes.ts, docs/footprint.md). sonic-boom
 * (pino's destination) checks one argument with assert(), which loads node:assert and its diff
 * printer; pino reads worker_threads.isMainThread, which loads the worker machinery: kubeward never
 * runs its logger in a worker thread (it starts none; the proxy's workers are processes).
 */
export const REPLACED_BUILTINS: ReadonlyArray<{ importer: RegExp; path: string; contents: string }> = [
  {
    importer: /node_modules\/sonic-boom\/index\.js$/,
    path: 'assert',
    contents: 'module.exports = function assert(ok, message) { if (!ok) throw new Error(message); };',
  },
  { importer: /node_modules\/pino\/lib\/tools\.js$/, path: 'worker_threads', contents: 'module.exports = { isMainThread: true };' },
];

export const replaceBuiltins: Plugin = {
  name: 'replace-builtins',
  setup(b) {
    b.onResolve({ filter: /^(node:)?[a-z_]+$/ }, (args) => {
      const r = REPLACED_BUILTINS.find((x) => x.path === args.path.replace(/^node:/, '') && x.importer.test(args.importer));
      return r ? { path: `${r.path} for ${args.importer.replace(/.*node_modules\//, '')}`, namespace: 'kubeward-replaced' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'kubeward-replaced' }, (args) => ({
      contents: REPLACED_BUILTINS.find((x) => args.path.startsWith(`${x.path} for `) && x.importer.test(`node_modules/${args.path.slice(x.path.length + 5)}`))!
        .contents,
      loader: 'js',
    }));
  },
};

export const leaveOutUnusedParts: Plugin = {
  name: 'leave-out-unused-library-parts',
  setup(b) {
    // zod's namespace object carries its 60-odd message locales (z.locales); kubeward's messages are
    // English (z.locales.en stays). About 250 kB of source that would otherwise stay in the heap.
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /node_modules\/zod\/v4\/(classic\/external|core\/index)\.js$/.test(args.importer)
        ? { path: join(dirname(args.importer), '../locales/en.js'), namespace: 'kubeward-zod-locales' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'kubeward-zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
    b.onResolve({ filter: /^\.\.?\// }, (args) => {
      const part = UNUSED_LIBRARY_PARTS.find((p) => p.path === args.path && p.importer.test(args.importer));
      return part ? { path: part.what, namespace: 'kubeward-left-out' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'kubeward-left-out' }, (args) => ({
      contents: `module.exports = function leftOut() { throw new Error(${JSON.stringify(`${args.path} is not part of the kubeward build (scripts/build.ts)`)}); };`,
      loader: 'js',
    }));
  },
};

export async function buildDist(opts: { outdir?: string } = {}): Promise<void> {
  const outdir = opts.outdir ?? DIST;
  await rm(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    // yaml-to-json: the YAML parser's process (src/config/yaml-process.ts runs dist/yaml-to-json.js).
    entryPoints: { main: 'src/cli/main.ts', 'yaml-to-json': 'src/config/yaml-to-json.ts' },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    sourcemap: 'linked',
    // Whitespace and syntax only: names stay, so stack traces and log fields read as in the sources
    // (the source maps lead back to them). The source text of every loaded chunk stays in the heap.
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'linked',
    chunkNames: 'chunks/[name]-[hash]',
    entryNames: '[name]',
    metafile: true,
    logLevel: 'warning',
    // The CommonJS libraries (pino, commander, yaml) call require() for built-ins. One
    // require for the whole build, made by the first chunk that loads: it only ever loads built-ins
    // (dist/ has no node_modules), and each createRequire() costs a Module object and a dozen path
    // resolutions, which at start-up made Node's path functions hot enough for V8 to compile them
    // with Maglev, paging in about 1.6 MiB of the compiler (docs/footprint.md).
    banner: {
      js: "import { createRequire as __kubewardCreateRequire } from 'node:module'; const __kubewardRequire = (globalThis[Symbol.for('kubeward.require')] ??= __kubewardCreateRequire(import.meta.url)); const require = __kubewardRequire;",
    },
    plugins: [replaceBuiltins, builtinsViaRequire, leaveOutUnusedParts],
  });
  // dist/ is its own package: ES modules, and nothing else to install.
  await writeFile(join(outdir, 'package.json'), `${JSON.stringify({ type: 'module', private: true }, null, 2)}\n`);
  await writeFile(join(outdir, 'meta.json'), JSON.stringify(result.metafile));
}

/**
 * The native relay (--relay native) for dist/ (dist/native/relay.node) and for the sources
 * (build/native/relay.node). Not built: said, and the proxy falls back to the handle path.
 */
export async function buildNativeAddons(outdir = DIST): Promise<NativeBuild> {
  const built = await buildNative(join(outdir, 'native', 'relay.node'));
  if (built.ok) await buildNative(DEV_ADDON);
  return built;
}

/**
 * What ships, as `npm run build` makes it: dist/ and its native relay. Anything that measures or
 * runs the build (the benches, the soak) builds through here: buildDist() alone empties dist/,
 * addon included, and a proxy started from it would fall back to the handle path.
 */
export async function buildShipped(): Promise<NativeBuild> {
  await buildDist();
  return buildNativeAddons();
}

if (import.meta.main) {
  const started = Date.now();
  const native = await buildShipped();
  process.stdout.write(`build: dist/ in ${Date.now() - started} ms\n`);
  process.stdout.write(native.ok ? `build: ${native.path}\n` : `build: native relay not built (${native.why}); --relay native falls back to handle\n`);
}
