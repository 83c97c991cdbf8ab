// Writes the flag table of each mode into its docs page (docs/<mode>.md), between the markers that
// src/config/flag-docs.ts defines, from the mode's declaration. test/docs-flags.test.ts fails when a
// page is out of date; run `node scripts/docs-flags.ts --write` after changing a mode's flags.
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findFlagBlock, flagBlock, type FlagDocSource } from '../src/config/flag-docs.ts';
import { watchDeclaration } from '../src/watch/watch-config.ts';
import { proxyDeclaration } from '../src/proxy/proxy-config.ts';
import { routesDeclaration } from '../src/routes/routes-config.ts';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');


/** Every mode with a flag table, and the docs page that holds it. */
export function documentedModes(): { decl: FlagDocSource; page: string }[] {
  return [
    { decl: watchDeclaration, page: 'docs/watch.md' },
    { decl: routesDeclaration, page: 'docs/routes.md' },
    { decl: proxyDeclaration, page: 'docs/proxy.md' },
  ];
}

/** Pages whose table differs from the declaration: the page's text with the block replaced. */
export async function outdatedPages(): Promise<{ page: string; mode: string; found: string | undefined; want: string; text: string }[]> {
  const out = [];
  for (const { decl, page } of documentedModes()) {
    const text = await readFile(join(ROOT, page), 'utf8');
    const found = findFlagBlock(text, decl.name);
    const want = flagBlock(decl);
    if (found !== want) out.push({ page, mode: decl.name, found, want, text: found === undefined ? text : text.replace(found, () => want) });
  }
  return out;
}

if (import.meta.main) {
  const write = process.argv.includes('--write');
  let missing = 0;
  for (const o of await outdatedPages()) {
    if (o.found === undefined) {
      missing++;
      process.stderr.write(`${o.page}: no flag table markers for ${o.mode}; add a "## Flags" section holding:\n${o.want}\n`);
    } else if (write) {
      await writeFile(join(ROOT, o.page), o.text);
      process.stdout.write(`${o.page}: flag table of ${o.mode} rewritten\n`);
    } else process.stdout.write(`${o.page}: flag table of ${o.mode} is out of date\n`);
  }
  process.exitCode = missing > 0 ? 1 : 0;
}
