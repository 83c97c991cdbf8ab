// V8's memory-saving mode for the operator once its start is over. After start (or when a standby
// becomes the leader), every cluster's first cycle comes within seconds, and V8's defaults are the
// fastest for that burst. After it, the operator runs small cycles all the time and its RSS was
// mostly memory V8 no longer used: pages of old garbage that V8 keeps mapped for reuse, and a heap
// limit grown to several times the live heap. --optimize-for-size makes V8 give such pages back
// and grow its heap less (measured in docs/operator-scale.md: RSS per cluster 249 -> about 100 KiB).
// Set from the start it made every first cycle at N=800 about 4 s later (more GC and less
// optimised code during the burst), hence only after it. v8.setFlagsFromString after start is what
// Node documents for flags read while running (this one is read at each GC and compile); a
// leader change starts the controllers in another process, whose own start is again without it.
import { setFlagsFromString } from 'node:v8';
import type { Clock } from '../../base/clock.ts';

/** How long after the first cycles were queued: their spread plus the time a busy start takes (27 s at N=1,000 under load). */
export const LEAN_AFTER_START_MS = 30_000;
export const LEAN_FLAG = '--optimize-for-size';

export interface LeanAfterStart {
  /** The controllers started with their first cycles spread over spreadMs: go lean after the burst. Once per process. */
  started(spreadMs: number): void;
  close(): void;
}

export function leanAfterStart(opts: { clock: Clock; setFlags?: (flags: string) => void; onLean?: () => void }): LeanAfterStart {
  const setFlags = opts.setFlags ?? setFlagsFromString;
  const abort = new AbortController();
  let armed = false;
  return {
    started(spreadMs) {
      if (armed) return;
      armed = true;
      opts.clock.sleep(spreadMs + LEAN_AFTER_START_MS, abort.signal).then(
        () => {
          setFlags(LEAN_FLAG);
          opts.onLean?.();
        },
        () => undefined, // closed first: the process is ending
      );
    },
    close: () => abort.abort(new Error('closed')),
  };
}
