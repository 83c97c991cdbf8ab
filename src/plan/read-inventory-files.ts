// Reads what an Ansible run reads for an inventory: the file, or each file of a directory (name
// order, skipping what ansible-core skips), and the group_vars/ and host_vars/ beside it and in the
// playbook directory, as ansible-core's host_group_vars plugin finds them. Texts only:
// parse-inventory.ts parses and checks them. Unreadable paths are UsageErrors naming the flag.
import { readFile, readdir, stat } from 'node:fs/promises';
import { dirname, extname, join } from 'node:path';
import { UsageError, describeError } from '../base/errors.ts';
import { readRawInventory, type InventorySources, type InventoryText, type VarsDirText } from './parse-inventory.ts';

/**
 * ansible-core's default inventory_ignore_extensions from 2.19 on (REJECT_EXTS + .orig, .cfg,
 * .retry); earlier releases also skip .ini there, which a note says when a directory holds one.
 */
const IGNORED_EXTENSIONS = ['.pyc', '.pyo', '.swp', '.bak', '~', '.rpm', '.md', '.txt', '.rst', '.orig', '.cfg', '.retry'];
/** host_group_vars: a name with no extension or one of these; load order for one name is this order. */
const VARS_EXTENSIONS = ['', '.yml', '.yaml', '.json'];
/** Extensions whose file is an inventory for sure: a problem in it is an error, not a skipped file. */
const INVENTORY_EXTENSIONS = ['.ini', '.yml', '.yaml', '.json'];

export interface ReadInventoryFiles {
  sources: InventorySources;
  /** What was skipped and why, as warnings. */
  notes: string[];
}

export async function readInventoryFiles(o: { inventory: string; vars?: readonly string[]; playbookDir?: string }): Promise<ReadInventoryFiles> {
  const notes: string[] = [];
  const isDir = (await statOf('--inventory', o.inventory)).isDirectory();
  const inventories = isDir ? await readInventoryDir(o.inventory, notes) : [await readText('--inventory', o.inventory)];
  if (inventories.length === 0) throw new UsageError(`--inventory ${o.inventory}: the directory holds no inventory file (.ini, .yaml, .yml, .json or none)`);
  const inventoryDir = await readVarsDir('--inventory', isDir ? o.inventory : dirname(o.inventory), notes);
  const playbookDir = o.playbookDir === undefined ? undefined : await readVarsDir('--playbook-dir', o.playbookDir, notes, true);
  const vars = await Promise.all((o.vars ?? []).map((p) => readText('--vars', p)));
  return { sources: { inventories, inventoryDir, playbookDir, vars }, notes };
}

async function readInventoryDir(dir: string, notes: string[]): Promise<InventoryText[]> {
  const out: InventoryText[] = [];
  for (const name of (await readdirOf('--inventory', dir)).sort()) {
    const path = join(dir, name);
    if (name.startsWith('.') || IGNORED_EXTENSIONS.some((e) => name.endsWith(e))) continue;
    if ((await statOf('--inventory', path)).isDirectory()) {
      if (!['group_vars', 'host_vars'].includes(name)) notes.push(`${path}: a directory inside the inventory directory is not read; pass it on its own`);
      continue;
    }
    const ext = extname(name).toLowerCase();
    const input = await readText('--inventory', path);
    if (!INVENTORY_EXTENSIONS.includes(ext)) {
      // Ansible tries such a file with every inventory plugin and skips it, with a warning, when none parses it.
      const raw = readRawInventory(input);
      if (raw.problems.length > 0 || (raw.hosts.length === 0 && raw.groups.length === 0)) {
        notes.push(`${path}: not an inventory (${raw.problems.length} problems reading it); skipped, as Ansible skips a source it cannot parse`);
        continue;
      }
    }
    if (ext === '.ini') notes.push(`${path}: read; ansible-core before 2.19 skips .ini files inside an inventory directory (inventory_ignore_extensions)`);
    out.push(input);
  }
  return out;
}

/** group_vars/ and host_vars/ of dir; absent directories are empty (required: --playbook-dir must exist). */
async function readVarsDir(flag: string, dir: string, notes: string[], required = false): Promise<VarsDirText> {
  if (required && !(await statOf(flag, dir)).isDirectory()) throw new UsageError(`${flag} ${dir}: not a directory`);
  return { dir, groups: await readVarsKind(flag, join(dir, 'group_vars'), notes), hosts: await readVarsKind(flag, join(dir, 'host_vars'), notes) };
}

async function readVarsKind(flag: string, dir: string, notes: string[]): Promise<Map<string, InventoryText[]>> {
  const byName = new Map<string, { rank: number; files: InventoryText[] }[]>();
  const entries = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return [];
    throw new UsageError(`${flag}: cannot read ${dir} (${describeError(err)})`, { cause: err });
  });
  for (const entry of entries.sort()) {
    if (entry.startsWith('.') || entry.endsWith('~')) continue;
    const path = join(dir, entry);
    const isDir = (await statOf(flag, path)).isDirectory();
    const ext = isDir ? '' : (VARS_EXTENSIONS.find((e) => e !== '' && entry.endsWith(e)) ?? (extname(entry) === '' ? '' : undefined));
    if (ext === undefined) {
      notes.push(`${path}: not loaded (Ansible loads only .yml, .yaml, .json or no extension)`);
      continue;
    }
    const name = entry.slice(0, entry.length - ext.length);
    const files = isDir ? await readVarsTree(flag, path, notes) : [await readText(flag, path)];
    byName.set(name, [...(byName.get(name) ?? []), { rank: VARS_EXTENSIONS.indexOf(ext), files }]);
  }
  return new Map([...byName].map(([name, found]) => [name, found.sort((a, b) => a.rank - b.rank).flatMap((f) => f.files)]));
}

/** A group_vars/<group>/ directory: its files, depth first in name order (host_group_vars loads them so). */
async function readVarsTree(flag: string, dir: string, notes: string[]): Promise<InventoryText[]> {
  const out: InventoryText[] = [];
  for (const entry of (await readdirOf(flag, dir)).sort()) {
    if (entry.startsWith('.') || entry.endsWith('~')) continue;
    const path = join(dir, entry);
    if ((await statOf(flag, path)).isDirectory()) out.push(...(await readVarsTree(flag, path, notes)));
    else if (VARS_EXTENSIONS.includes(extname(entry))) out.push(await readText(flag, path));
    else notes.push(`${path}: not loaded (Ansible loads only .yml, .yaml, .json or no extension)`);
  }
  return out;
}

async function readText(flag: string, path: string): Promise<InventoryText> {
  try {
    return { source: path, text: await readFile(path, 'utf8') };
  } catch (err) {
    throw new UsageError(`${flag} ${path}: cannot read the file (${describeError(err)})`, { cause: err });
  }
}

async function statOf(flag: string, path: string): Promise<import('node:fs').Stats> {
  try {
    return await stat(path);
  } catch (err) {
    throw new UsageError(`${flag} ${path}: cannot read the file (${describeError(err)})`, { cause: err });
  }
}

async function readdirOf(flag: string, dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    throw new UsageError(`${flag} ${dir}: cannot list it (${describeError(err)})`, { cause: err });
  }
}
