// Gives memory a load left behind back to the kernel: once a daemon serves (start-up is a load too:
// cli/mode-command.ts) and, in the proxy, once a load has passed (proxy/plan-memory-trim.ts says
// when). Two parts hold it (bench --soak's breakdown):
// - the V8 heap: under load the old generation grows its committed pages, and at rest V8 keeps
//   them (its memory reducer did not run within a minute of idling in the soak), half of them
//   empty. A memory-reducing full collection (the "last resort" flavour: compacts, releases the
//   free pages) brings the committed heap back near the live set, in tens of milliseconds.
// - glibc's malloc arenas keep what a burst of connections freed: malloc_trim, through the native
//   addon (none when it is not built).
// The collection needs V8's gc(), which Node exposes only under --expose-gc: the flag is set at the
// first use and the function is taken from a fresh context (the main one was created without it),
// which the collection itself frees afterwards.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type GcFunction = (opts: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

export interface GivenBack {
  /** V8's committed heap before and after the collection (bytes). */
  heapBefore: number;
  heapAfter: number;
  /** malloc_trim released some memory; undefined without the native addon. */
  mallocTrimmed: boolean | undefined;
  ms: number;
}

export function giveBackMemory(trimMalloc: (() => boolean) | undefined): GivenBack {
  const started = performance.now();
  const heapBefore = process.memoryUsage().heapTotal;
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as GcFunction | undefined;
  if (typeof gc === 'function') gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  const heapAfter = process.memoryUsage().heapTotal;
  // After the collection: it frees external memory (Buffers) whose blocks malloc can then give back.
  const mallocTrimmed = trimMalloc?.();
  return { heapBefore, heapAfter, mallocTrimmed, ms: Math.round(performance.now() - started) };
}
