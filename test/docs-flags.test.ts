// The flag tables of docs/<mode>.md against the modes' config modules: a page whose table is out of
// date (a flag added, renamed or removed, a default or range changed) fails here, as does a flag whose
// --help default says something else than its schema fills in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { optional, prefault, string } from 'zod/mini';
import { defaultDisagreements, findFlagBlock, flagBlock, flagTable, type FlagDocSource } from '../src/config/flag-docs.ts';
import { duration, integer } from '../src/config/fields.ts';
import { flagNameOf } from '../src/config/load-config.ts';
import { documentedModes, outdatedPages, ROOT } from '../scripts/docs-flags.ts';

test('every docs page holds the flag table its mode declares (fix: node scripts/docs-flags.ts --write)', async () => {
  const outdated = await outdatedPages();
  assert.deepEqual(
    outdated.map((o) => `${o.page}: ${o.found === undefined ? 'no table' : 'table out of date'} for ${o.mode}`),
    [],
  );
});

test('every flag default shown in --help is the default its schema fills in', () => {
  assert.deepEqual(
    documentedModes().flatMap(({ decl }) => defaultDisagreements(decl)),
    [],
  );
});

test('every flag a hand-written table of a docs page names is a flag of a mode on that page', async () => {
  const common = ['--config', '--log-format', '--log-level', '--admin-address'];
  const pages = new Map<string, FlagDocSource[]>();
  for (const { decl, page } of documentedModes()) pages.set(page, [...(pages.get(page) ?? []), decl]);
  for (const [page, decls] of pages) {
    let handWritten = await readFile(join(ROOT, page), 'utf8');
    for (const d of decls) handWritten = handWritten.replace(findFlagBlock(handWritten, d.name) ?? '', '');
    const known = new Set([...common, ...decls.flatMap((d) => d.flags.flatMap((f) => [flagNameOf(f.key), `--no-${flagNameOf(f.key).slice(2)}`]))]);
    const named = handWritten
      .split('\n')
      .filter((l) => l.startsWith('| `--'))
      .flatMap((l) => [...l.split('|')[1]!.matchAll(/`(--[a-z0-9-]+)/g)].map((m) => m[1]!));
    assert.deepEqual(
      named.filter((n) => !known.has(n)),
      [],
      `${page}: table rows name flags its modes do not have`,
    );
  }
});

const sample: FlagDocSource = {
  name: 'sample',
  adminPort: 9999,
  fields: { interval: prefault(duration({ min: 100, max: 3_600_000 }), '2s'), name: optional(string()) },
  flags: [
    { key: 'interval', value: '<duration>', help: 'how often', defaultText: '2s' },
    { key: 'name', value: '<a|b>', help: 'which <one>' },
  ],
};

test('the table shows each flag with its default and range, and escapes what markdown would swallow', () => {
  const table = flagTable(sample);
  assert.match(table, /^\| `--interval <duration>` \| `interval` \| `2s` \| 100ms–1h \| how often \|$/m);
  assert.match(table, /^\| `--name <a\\\|b>` \| `name` \| — \| {2}\| which &lt;one> \|$/m);
  assert.match(flagBlock(sample), /`--admin-address` \(default `127\.0\.0\.1:9999`\)/);
});

test('a page whose default or range is stale no longer matches, and a help default that contradicts the schema is named', () => {
  const page = `# sample\n\n${flagBlock(sample)}\n`;
  assert.equal(findFlagBlock(page, 'sample'), flagBlock(sample));
  const changedDefault = { ...sample, fields: { ...sample.fields, interval: prefault(duration({ min: 100, max: 3_600_000 }), '3s') } };
  assert.deepEqual(defaultDisagreements(changedDefault), ['sample --interval: --help says 2s, the schema fills in 3s']);
  const changedRange = { ...sample, fields: { ...sample.fields, interval: prefault(duration({ min: 100, max: 60_000 }), '2s') } };
  assert.notEqual(findFlagBlock(page, 'sample'), flagBlock(changedRange));
  const changedCount = {
    ...sample,
    fields: { ...sample.fields, interval: prefault(integer(1, 5), 2) },
    flags: [{ key: 'interval', value: '<n>', help: 'how often', defaultText: '3' }],
  };
  assert.match(flagTable(changedCount), /\| `3` \| 1–5 \|/);
  assert.deepEqual(defaultDisagreements(changedCount), ['sample --interval: --help says 3, the schema fills in 2']);
});

test("the admin port table of docs/common.md gives each daemon's declared default", async () => {
  const text = await readFile(join(ROOT, 'docs/common.md'), 'utf8');
  const table = new Map([...text.matchAll(/^\| ([a-z-]+) \| (127\.0\.0\.1:\d+) \|$/gm)].map((m) => [m[1]!, m[2]!]));
  const daemons = documentedModes().filter(({ decl }) => decl.adminPort !== null);
  assert.ok(daemons.length >= 6, 'the daemons are listed in scripts/docs-flags.ts');
  for (const { decl } of daemons) assert.equal(table.get(decl.name), `127.0.0.1:${decl.adminPort}`, `docs/common.md: the admin address of ${decl.name}`);
});

test('every mode kubeward has is documented with a flag table', async () => {
  const { MODE_LOADERS } = await import('../src/cli/modes.ts');
  const documented = new Set(documentedModes().map(({ decl }) => decl.name.split(' ')[0]!));
  assert.deepEqual(
    Object.keys(MODE_LOADERS).filter((m) => !documented.has(m)),
    [],
  );
});
