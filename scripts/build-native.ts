// Builds the native relay (native/relay.c, --relay native) into a Node addon with the system's C
// compiler: no node-gyp, no dependency. The headers are those of the Node that runs this script
// (the npm `node` package's platform package ships include/node with node_api.h and uv.h), so the
// addon matches the Node that loads it. Without a compiler or headers the build says so and goes
// on: the proxy then falls back to --relay handle, logged.
//   node scripts/build-native.ts [--sanitize] [--out <file>]
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const NATIVE_SOURCE = join(ROOT, 'native', 'relay.c');
/** Where the sources (npm run kubeward, the tests) find the addon: see src/proxy/relay/native-relay.ts. */
export const DEV_ADDON = join(ROOT, 'build', 'native', 'relay.node');

export type NativeBuild = { ok: true; path: string } | { ok: false; why: string };

/** Node's C headers: the npm node package's platform package first, then next to the running binary. */
export function nodeIncludeDir(): string | undefined {
  const candidates: string[] = [];
  try {
    const req = createRequire(join(ROOT, 'package.json'));
    const nodePkg = dirname(req.resolve('node/package.json'));
    const platformPkg = `node-${process.platform}-${process.arch}`;
    candidates.push(join(dirname(createRequire(join(nodePkg, 'package.json')).resolve(`${platformPkg}/package.json`)), 'include', 'node'));
  } catch {
    // Not installed through npm's node package: try the running binary's prefix.
  }
  candidates.push(join(dirname(dirname(process.execPath)), 'include', 'node'));
  return candidates.find((d) => existsSync(join(d, 'node_api.h')) && existsSync(join(d, 'uv.h')));
}

/** The compiler flags; `sanitize` adds AddressSanitizer and UBSan (then run Node with LD_PRELOAD of libasan). */
export function compilerArgs(include: string, out: string, sanitize = false): string[] {
  const base = ['-O2', '-fPIC', '-shared', '-std=c11', '-D_GNU_SOURCE', '-Wall', '-Wextra', '-Werror', '-DNODE_GYP_MODULE_NAME=kubeward_relay'];
  const san = sanitize ? ['-g', '-fno-omit-frame-pointer', '-fsanitize=address,undefined', '-fno-sanitize-recover=undefined'] : [];
  return [...base, ...san, '-I', include, '-o', out, NATIVE_SOURCE];
}

/** Compiles the addon to `out` (written whole or not at all). */
export async function buildNative(out: string, opts: { sanitize?: boolean; cc?: string } = {}): Promise<NativeBuild> {
  const include = nodeIncludeDir();
  if (include === undefined) return { ok: false, why: "Node's C headers (node_api.h, uv.h) were not found" };
  const cc = opts.cc ?? process.env.CC ?? 'cc';
  await mkdir(dirname(out), { recursive: true });
  const tmp = `${out}.${process.pid}.tmp`;
  try {
    await promisify(execFile)(cc, compilerArgs(include, tmp, opts.sanitize), { cwd: ROOT });
    await rename(tmp, out);
    return { ok: true, path: out };
  } catch (err) {
    await rm(tmp, { force: true });
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') return { ok: false, why: `no C compiler (${cc}) on PATH` };
    const said = (e.stderr ?? '').trim() || `exit code ${String(e.code ?? '?')}`;
    return { ok: false, why: `${cc} failed: ${said.split('\n').slice(0, 5).join(' | ')}` };
  }
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--out');
  const out = at >= 0 ? args[at + 1] : DEV_ADDON;
  if (out === undefined || out.startsWith('--')) {
    process.stderr.write('build-native: --out needs a file name\n');
    process.exit(2);
  }
  const built = await buildNative(out, { sanitize: args.includes('--sanitize') });
  process.stdout.write(built.ok ? `build: ${built.path}\n` : `build: native relay not built (${built.why}); --relay native falls back to handle\n`);
}
