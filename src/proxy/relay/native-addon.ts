// The one load of native/relay.c's addon per process, shared by the native relay (native-relay.ts),
// the listener hand-over (src/handover/handover-addon.ts) and malloc_trim (the give-back at start-up,
// src/cli/mode-command.ts, and the proxy's after a load, src/proxy/start-proxy.ts). One load, because loading the same file again runs its module init
// again, which replaces the instance data the relay's connections live in: the process's entry
// point makes one NativeAddon and hands it to each.
import { existsSync } from 'node:fs';

/** The addon's exports, or why there are none. */
export type AddonExports = { exports: Record<string, unknown>; path: string } | { unusable: string };

export class NativeAddon {
  readonly #candidates: readonly string[];
  #loaded: AddonExports | undefined;

  constructor(candidates: readonly string[]) {
    this.#candidates = candidates;
  }

  /** Loads the first candidate that exists, at the first call only; never throws. */
  load(): AddonExports {
    return (this.#loaded ??= loadFirst(this.#candidates));
  }

  /** The addon's malloc_trim (true when memory went back), or undefined when there is no addon. */
  mallocTrim(): (() => boolean) | undefined {
    const loaded = this.load();
    const trim = 'exports' in loaded ? loaded.exports.trim : undefined;
    return typeof trim === 'function' ? () => trim() === true : undefined;
  }
}

function loadFirst(candidates: readonly string[]): AddonExports {
  if (process.platform !== 'linux') return { unusable: `the native addon is built for Linux only (this is ${process.platform})` };
  const path = candidates.find((p) => existsSync(p));
  if (path === undefined) return { unusable: `no native relay addon at ${candidates.join(' or ')} (npm run build compiles it)` };
  try {
    const mod = { exports: {} as Record<string, unknown> };
    process.dlopen(mod, path);
    return { exports: mod.exports, path };
  } catch (err) {
    return { unusable: `loading ${path} failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}
