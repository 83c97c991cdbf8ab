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
import { endpointsDeclaration, renderDeclaration, sansDeclaration } from '../src/plan/plan-config.ts';
import { checkCertDeclaration } from '../src/plan/check-cert-config.ts';
import { routegcDeclaration } from '../src/controllers/routegc/routegc-config.ts';
import { flightDeclaration } from '../src/controllers/flight/flight-config.ts';
import { deorbitDeclaration } from '../src/controllers/deorbit/deorbit-config.ts';
import { demoDeclaration } from '../src/demo/demo-config.ts';
import { agentDeclaration } from '../src/agent/agent-config.ts';
import { operatorDeclaration } from '../src/controllers/operator/operator-config.ts';
import type { OneShotDeclaration } from '../src/config/mode-declaration.ts';
import type { core } from 'zod/mini';

/** A one-shot command's flags as a table source: named by its path, no admin listener. */
const oneShot = (d: Pick<OneShotDeclaration<core.$ZodShape>, 'path' | 'flags' | 'fields'>): FlagDocSource => ({
  name: d.path,
  flags: d.flags,
  fields: d.fields,
  adminPort: null,
});

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Every mode with a flag table, and the docs page that holds it. */
export function documentedModes(): { decl: FlagDocSource; page: string }[] {
  return [
    { decl: watchDeclaration, page: 'docs/watch.md' },
    { decl: routesDeclaration, page: 'docs/routes.md' },
    { decl: proxyDeclaration, page: 'docs/proxy.md' },
    { decl: routegcDeclaration, page: 'docs/routegc.md' },
    { decl: flightDeclaration, page: 'docs/flight.md' },
    { decl: operatorDeclaration, page: 'docs/operator.md' },
    { decl: deorbitDeclaration, page: 'docs/operator.md' },
    { decl: demoDeclaration, page: 'docs/demo.md' },
    { decl: agentDeclaration, page: 'docs/agent.md' },
    { decl: oneShot(endpointsDeclaration), page: 'docs/plan.md' },
    { decl: oneShot(renderDeclaration), page: 'docs/plan.md' },
    { decl: oneShot(sansDeclaration), page: 'docs/plan.md' },
    { decl: oneShot(checkCertDeclaration), page: 'docs/check-cert.md' },
  ];
}

/** Tables that differ from their declaration, each with its page's text once every table of that page is rewritten. */
export async function outdatedPages(): Promise<{ page: string; mode: string; found: string | undefined; want: string; text: string }[]> {
  const out = [];
  const texts = new Map<string, string>();
  for (const { decl, page } of documentedModes()) {
    const text = texts.get(page) ?? (await readFile(join(ROOT, page), 'utf8'));
    const found = findFlagBlock(text, decl.name);
    const want = flagBlock(decl);
    const next = found === undefined ? text : text.replace(found, () => want);
    texts.set(page, next);
    if (found !== want) out.push({ page, mode: decl.name, found, want, text: next });
  }
  // Every entry of a page carries the page with all its tables rewritten.
  return out.map((o) => ({ ...o, text: texts.get(o.page)! }));
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
