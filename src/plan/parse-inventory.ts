// Inventory text in, typed inventory or problems out: picks the reader by file name or content
// (kubeward YAML, Ansible YAML, Ansible INI), then validates. Pure: the caller reads the files.
import { parse as parseYaml } from 'yaml';
import { buildInventory, type BuildOptions, type BuildResult } from './build-inventory.ts';
import { readIniInventory } from './read-ini-inventory.ts';
import { readYamlInventory } from './read-yaml-inventory.ts';
import { addRawHost, emptyRawInventory, groupNamed, type InventoryProblem, type RawInventory, type Vars } from './raw-inventory.ts';
import type { VarsDir, VarsFile } from './ansible-precedence.ts';

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
  return parseInventorySources({ inventories: [input], vars: varsFiles }, opts);
}

/** group_vars/ and host_vars/ of one directory as read: files by group or host name, in load order. */
export interface VarsDirText {
  dir: string;
  groups: ReadonlyMap<string, readonly InventoryText[]>;
  hosts: ReadonlyMap<string, readonly InventoryText[]>;
}

/** Everything an Ansible run would read for the inventory, as texts (src/plan/read-inventory-files.ts reads them). */
export interface InventorySources {
  /** One inventory file, or a directory's files in name order: merged as Ansible merges them. */
  inventories: InventoryText[];
  /** group_vars/ and host_vars/ beside the inventory file (in the directory, for a directory inventory). */
  inventoryDir?: VarsDirText;
  /** group_vars/ and host_vars/ of the playbook's directory. */
  playbookDir?: VarsDirText;
  /** --vars files, in order. */
  vars: InventoryText[];
}

/** Reads every source, merges the inventories, checks every variables file, then validates the whole. */
export function parseInventorySources(sources: InventorySources, opts: BuildOptions = {}): BuildResult {
  const several = sources.inventories.length > 1;
  const raw = mergeRawInventories(
    sources.inventories.map((input) => {
      const r = readRawInventory(input);
      // With several files, say which one each problem is in.
      if (several) for (const p of r.problems) p.where = p.where === undefined ? input.source : `${input.source} ${p.where}`;
      return r;
    }),
  );
  // A file that could not be read at all would only add noise ("no control-plane hosts") to its one problem.
  if (raw.problems.some((p) => p.field === 'yaml') || (raw.problems.length > 0 && raw.hosts.length === 0 && raw.groups.length === 0))
    return { ok: false, problems: raw.problems };
  const problems: InventoryProblem[] = [];
  const extra = sources.vars.flatMap((f) => {
    const v = readVarsFile(f, problems);
    return v === undefined ? [] : [v];
  });
  const dir = (d: VarsDirText | undefined): VarsDir | undefined =>
    d === undefined ? undefined : { dir: d.dir, groups: readVarsFiles(d.groups, problems), hosts: readVarsFiles(d.hosts, problems) };
  const dirs = { inventory: dir(sources.inventoryDir), playbook: dir(sources.playbookDir) };
  raw.problems.push(...problems);
  return buildInventory(raw, extra, opts, dirs);
}

function readVarsFiles(byName: ReadonlyMap<string, readonly InventoryText[]>, problems: InventoryProblem[]): Map<string, VarsFile[]> {
  const out = new Map<string, VarsFile[]>();
  for (const [name, files] of byName) {
    out.set(
      name,
      files.flatMap((f) => {
        const vars = readVarsFile(f, problems);
        return vars === undefined ? [] : [{ source: f.source, vars }];
      }),
    );
  }
  return out;
}

/** A variables file (YAML or JSON): a mapping, or empty; anything else is a problem naming the file. */
function readVarsFile(f: InventoryText, problems: InventoryProblem[]): Vars | undefined {
  try {
    const data: unknown = parseYaml(f.text);
    if (data === null || data === undefined) return undefined;
    if (typeof data === 'object' && !Array.isArray(data)) return data as Vars;
    problems.push({ field: 'vars', message: `${f.source}: must be a mapping of variable names to values` });
  } catch (err) {
    problems.push({ field: 'vars', message: `${f.source} is not valid YAML: ${(err as Error).message.split('\n')[0]}` });
  }
  return undefined;
}

/**
 * Several inventory files as one, in order, as Ansible adds sources to one inventory: hosts and
 * group members are the union, a later file's group variables win, and a host defined twice with
 * different values is a problem (addRawHost).
 */
export function mergeRawInventories(raws: RawInventory[]): RawInventory {
  if (raws.length === 1) return raws[0]!;
  const out = emptyRawInventory();
  for (const r of raws) {
    out.problems.push(...r.problems);
    for (const h of r.hosts) addRawHost(out, { ...h, vars: { ...h.vars } });
    for (const g of r.groups) {
      const into = groupNamed(out, g.name, g.where);
      for (const h of g.hosts) if (!into.hosts.includes(h)) into.hosts.push(h);
      for (const c of g.children) if (!into.children.includes(c)) into.children.push(c);
      Object.assign(into.vars, g.vars);
    }
    Object.assign(out.vars, r.vars);
  }
  return out;
}
