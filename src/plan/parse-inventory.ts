// Inventory text in, typed inventory or problems out: picks the reader by file name or content
// (kubeward YAML, Ansible YAML, Ansible INI), then validates. Pure: the caller reads the files.
import { parse as parseYaml } from 'yaml';
import { buildInventory, type BuildOptions, type BuildResult } from './build-inventory.ts';
import { readIniInventory } from './read-ini-inventory.ts';
import { readYamlInventory } from './read-yaml-inventory.ts';
import type { InventoryProblem, RawInventory, Vars } from './raw-inventory.ts';

export type InventoryFormat = 'yaml' | 'ini';

export interface InventoryText {
  /** A path or label for messages; its extension picks the format (.ini, .yaml/.yml). */
  source: string;
  text: string;
}

/** INI when the name says so, or when the first meaningful line is a [section] header. */
export function detectFormat(input: InventoryText): InventoryFormat {
  if (/\.(ini|cfg)$/i.test(input.source)) return 'ini';
  if (/\.ya?ml$/i.test(input.source)) return 'yaml';
  const first = input.text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => l !== '' && !l.startsWith('#') && !l.startsWith(';'));
  return first !== undefined && /^\[[^\]]+\]$/.test(first) ? 'ini' : 'yaml';
}

export function readRawInventory(input: InventoryText): RawInventory {
  return detectFormat(input) === 'ini' ? readIniInventory(input.text) : readYamlInventory(input.text, input.source);
}

/**
 * varsFiles are kubespray group_vars files (all.yml, k8s-cluster.yml...), applied in order on top of
 * the inventory's own variables.
 */
export function parseInventory(input: InventoryText, varsFiles: InventoryText[] = [], opts: BuildOptions = {}): BuildResult {
  const raw = readRawInventory(input);
  // A file that could not be read at all would only add noise ("no control-plane hosts") to its one problem.
  if (raw.problems.some((p) => p.field === 'yaml') || (raw.problems.length > 0 && raw.hosts.length === 0 && raw.groups.length === 0))
    return { ok: false, problems: raw.problems };
  const extra: Vars[] = [];
  const problems: InventoryProblem[] = [];
  for (const f of varsFiles) {
    try {
      const data: unknown = parseYaml(f.text);
      if (data === null || data === undefined) continue;
      if (typeof data !== 'object' || Array.isArray(data))
        problems.push({ field: 'vars', message: `${f.source}: must be a mapping of variable names to values` });
      else extra.push(data as Vars);
    } catch (err) {
      problems.push({ field: 'vars', message: `${f.source} is not valid YAML: ${(err as Error).message.split('\n')[0]}` });
    }
  }
  raw.problems.push(...problems);
  return buildInventory(raw, extra, opts);
}
