// The one load of native/relay.c's addon per process, shared by the native relay (native-relay.ts)
// and the listener hand-over (src/handover/handover-addon.ts). One load, because loading the same
// file again runs its module init again, which replaces the instance data the relay's connections
// live in: the cache below is process-wide like the dlopen it stands for.
import { existsSync } from 'node:fs';

/** The addon's exports, or why there are none. */
export type AddonExports = { exports: Record<string, unknown>; path: string } | { unusable: string };

const loaded = new Map<string, AddonExports>();

/** Loads the first candidate that exists (once per process and file); never throws. */
export function loadAddonExports(candidates: readonly string[]): AddonExports {
  if (process.platform !== 'linux') return { unusable: `the native addon is built for Linux only (this is ${process.platform})` };
  const path = candidates.find((p) => existsSync(p));
  if (path === undefined) return { unusable: `no native relay addon at ${candidates.join(' or ')} (npm run build compiles it)` };
  const known = loaded.get(path);
  if (known) return known;
  let result: AddonExports;
  try {
    const mod = { exports: {} as Record<string, unknown> };
    process.dlopen(mod, path);
    result = { exports: mod.exports, path };
  } catch (err) {
    result = { unusable: `loading ${path} failed: ${err instanceof Error ? err.message : String(err)}` };
  }
  loaded.set(path, result);
  return result;
}
