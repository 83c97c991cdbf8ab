// A mode's flags as the table of its docs page: flag, default, range, help, all read from the mode's
// declaration (help text and defaults) and its zod fields (defaults and ranges), so the page cannot
// drift from the program. scripts/docs-flags.ts writes the tables; test/docs-flags.test.ts fails when
// a page and a declaration disagree, or when a flag's help default and its schema default do.
import type { core } from 'zod/mini';
import { flagNameOf } from './load-config.ts';
import { rangeOf } from './fields.ts';
import type { ModeDeclaration, ModeFlag } from './mode-declaration.ts';

/** What a flag table needs of a mode's declaration (any mode's: the checks are left out). */
export type FlagDocSource = Pick<ModeDeclaration<core.$ZodShape>, 'name' | 'flags' | 'fields' | 'adminPort'>;

export interface FlagRow {
  flag: string;
  key: string;
  defaultText: string;
  range: string;
  help: string;
}

/** The default a field's schema fills in, looking through optional wrappers; undefined when it has none. */
export function schemaDefault(field: unknown): unknown {
  let f = field as { _zod?: { def?: { type?: string; innerType?: unknown; defaultValue?: unknown } } } | undefined;
  for (let i = 0; i < 8 && f?._zod?.def; i++) {
    const def = f._zod.def;
    if (def.type === 'prefault' || def.type === 'default') return def.defaultValue;
    if (def.type !== 'optional' && def.type !== 'nullable') return undefined;
    f = def.innerType as typeof f;
  }
  return undefined;
}

/** A schema default as --help writes it: on/off for switches, a list joined by commas; undefined for none or an empty list. */
export function formatDefault(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.map(String).join(', ');
  return String(value);
}

export function flagRows(decl: FlagDocSource): FlagRow[] {
  return decl.flags.map((f) => {
    const field = (decl.fields as Record<string, unknown>)[f.key];
    return {
      flag: flagName(f),
      key: f.key,
      // A switch without a default in its schema is off unless given.
      defaultText: f.defaultText ?? formatDefault(schemaDefault(field)) ?? (f.value === undefined ? 'off' : '—'),
      range: rangeOf(field) ?? '',
      help: f.help + (f.repeatable ? '; repeatable' : ''),
    };
  });
}

function flagName(f: ModeFlag): string {
  const name = flagNameOf(f.key);
  if (f.value !== undefined) return `${f.short === undefined ? '' : `${f.short}, `}${name} ${f.value}`;
  return f.negatable ? `${name}, --no-${name.slice(2)}` : name;
}

/** Markdown cell text: pipes escaped, so `<down|keep>` stays in one cell. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** The flag table of a mode, as written into its docs page. */
export function flagTable(decl: FlagDocSource): string {
  const lines = ['| flag | config key | default | range | |', '|---|---|---|---|---|'];
  for (const r of flagRows(decl)) {
    const dflt = r.defaultText === '—' || /\s/.test(r.defaultText) ? r.defaultText : '`' + r.defaultText + '`';
    lines.push(`| ${cell('`' + r.flag + '`')} | \`${r.key}\` | ${cell(dflt.replace(/</g, '&lt;'))} | ${r.range} | ${cell(r.help.replace(/</g, '&lt;'))} |`);
  }
  return lines.join('\n');
}

/**
 * Flags whose --help default says something else than the schema fills in. A help default may
 * describe a default the schema cannot hold (a path derived from another flag): those fields have no
 * schema default, so they are not compared.
 */
export function defaultDisagreements(decl: FlagDocSource): string[] {
  const out: string[] = [];
  for (const f of decl.flags) {
    const fromSchema = formatDefault(schemaDefault((decl.fields as Record<string, unknown>)[f.key]));
    if (f.defaultText !== undefined && fromSchema !== undefined && f.defaultText !== fromSchema) {
      out.push(`${decl.name} ${flagNameOf(f.key)}: --help says ${f.defaultText}, the schema fills in ${fromSchema}`);
    }
  }
  return out;
}

const BEGIN = (mode: string) =>
  `<!-- BEGIN flags ${mode}: generated from the mode's config module by "node scripts/docs-flags.ts --write"; edit the module, not this table -->`;
const END = (mode: string) => `<!-- END flags ${mode} -->`;

/** The generated block of a page for a mode: the table between its markers. */
export function flagBlock(decl: FlagDocSource): string {
  const admin = decl.adminPort === null ? 'off' : `127.0.0.1:${decl.adminPort}`;
  const common = `Also the [flags of every mode](common.md): \`--config\`, \`--log-format\`, \`--log-level\`, \`--admin-address\` (default \`${admin}\`).`;
  const table = decl.flags.length === 0 ? 'No flags of its own.' : flagTable(decl);
  return `${BEGIN(decl.name)}\n${table}\n\n${common}\n${END(decl.name)}`;
}

/** The block of `mode` as a page holds it, or undefined when the page has no markers for it. */
export function findFlagBlock(page: string, mode: string): string | undefined {
  const start = page.indexOf(BEGIN(mode));
  const end = page.indexOf(END(mode));
  if (start < 0 || end < start) return undefined;
  return page.slice(start, end + END(mode).length);
}
