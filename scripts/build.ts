// npm run build: the shipped program in dist/. esbuild bundles src/cli/main.ts with its runtime
// dependencies (dist/ needs no node_modules) into ES modules split per mode, so a mode's chunk and
// its libraries are read only when that mode runs (modes.ts imports each mode dynamically).
// bin/kubeward.js runs dist/main.js; npm run kubeward and the tests keep running the sources.
import { build, type Plugin } from 'esbuild';
import { builtinModules } from 'node:module';
import { rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
 * worker_threads, assert), prom-client's Pushgateway (http, https, zlib) and cluster aggregator
 * (cluster). Calling one of them in the build throws and says so.
 */
export const UNUSED_LIBRARY_PARTS: ReadonlyArray<{ importer: RegExp; path: string; what: string }> = [
  { importer: /node_modules\/pino\/(pino|lib\/tools)\.js$/, path: './lib/transport', what: 'pino.transport()' },
  { importer: /node_modules\/pino\/(pino|lib\/tools)\.js$/, path: './transport', what: 'pino.transport()' },
  { importer: /node_modules\/prom-client\/index\.js$/, path: './lib/pushgateway', what: 'prom-client Pushgateway' },
  { importer: /node_modules\/prom-client\/index\.js$/, path: './lib/cluster', what: 'prom-client AggregatorRegistry' },
];

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
    // prom-client's CPU counter asks OpenTelemetry for the active span only with exemplars on, which
    // kubeward never turns on: no span, no exemplar labels, and the API (about 40 kB) stays out.
    b.onResolve({ filter: /^@opentelemetry\/api$/ }, (args) =>
      /node_modules\/prom-client\//.test(args.importer) ? { path: 'opentelemetry-api-without-spans', namespace: 'kubeward-otel' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'kubeward-otel' }, () => ({
      contents: 'module.exports = { trace: { getSpan: () => undefined }, context: { active: () => undefined } };',
      loader: 'js',
    }));
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
    entryPoints: { main: 'src/cli/main.ts' },
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
    // The CommonJS libraries (pino, prom-client, commander, yaml) call require() for built-ins.
    banner: {
      js: "import { createRequire as __kubewardCreateRequire } from 'node:module'; const __kubewardRequire = __kubewardCreateRequire(import.meta.url); const require = __kubewardRequire;",
    },
    plugins: [builtinsViaRequire, leaveOutUnusedParts],
  });
  // dist/ is its own package: ES modules, and nothing else to install.
  await writeFile(join(outdir, 'package.json'), `${JSON.stringify({ type: 'module', private: true }, null, 2)}\n`);
  await writeFile(join(outdir, 'meta.json'), JSON.stringify(result.metafile));
}

if (import.meta.main) {
  const started = Date.now();
  await buildDist();
  process.stdout.write(`build: dist/ in ${Date.now() - started} ms\n`);
}
