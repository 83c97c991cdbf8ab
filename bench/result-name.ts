// The name of a bench run's result file. Results are evidence that docs link to, so a second run on
// the same day never writes over the first: a run takes the first free name, <base>, then <base>-2,
// <base>-3 ... for every extension it writes.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The first `<base>` or `<base>-<n>` (n from 2) for which none of `<name><ext>` exists in `dir`.
 * `taken` is the existence check, injectable for tests.
 */
export function freeResultBase(dir: string, base: string, exts: readonly string[], taken: (path: string) => boolean = existsSync): string {
  for (let n = 1; n < 10_000; n++) {
    const name = n === 1 ? base : `${base}-${n}`;
    if (!exts.some((ext) => taken(join(dir, name + ext)))) return name;
  }
  throw new Error(`${dir}: no free result name for ${base} (10,000 taken)`);
}
