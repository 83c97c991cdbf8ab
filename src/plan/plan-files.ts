// Adapter: reads what `plan render` would overwrite, compares it with the rendered files, and
// writes them atomically. Files in the directory that the plan no longer renders are reported,
// never deleted.
import { mkdir, readFile, readdir, realpath } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { UsageError } from '../base/errors.ts';
import { writeFileAtomic } from '../sys/atomic-file.ts';
import type { RenderedFile } from './render-plan.ts';
import { unifiedDiff } from './unified-diff.ts';
import { isSafeRelativePath } from './render-plan.ts';

export interface TreeComparison {
  /** Unified diffs of files that differ or are missing, in path order. */
  diffs: string[];
  changed: string[];
  /** Files under DIR the plan does not render (stale nodes, hand-made files). */
  extra: string[];
}

async function listTree(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      if (e.isDirectory()) await walk(join(d, e.name));
      else out.push(relative(dir, join(d, e.name)).split(sep).join('/'));
    }
  };
  await walk(dir);
  return out.sort();
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * The absolute path of a rendered file, refused unless it stays under dir: the relative path has no
 * "..", and no directory on the way (a symlink planted in DIR) leads outside it.
 */
export async function pathUnder(dir: string, rel: string): Promise<string> {
  const root = resolve(dir);
  const full = resolve(root, rel);
  if (!isSafeRelativePath(rel) || !full.startsWith(root + sep))
    throw new UsageError(`--out ${dir}: refusing to write ${JSON.stringify(rel)}, which is not inside the directory`);
  const realRoot = await realpath(root).catch(() => root);
  let parent = dirname(full);
  // The deepest existing ancestor decides where the write lands.
  for (;;) {
    const real = await realpath(parent).catch(() => undefined);
    if (real !== undefined) {
      if (real !== realRoot && !real.startsWith(realRoot + sep))
        throw new UsageError(`--out ${dir}: refusing to write ${JSON.stringify(rel)}: ${parent} leads outside the directory (a symlink)`);
      return full;
    }
    if (parent === root || dirname(parent) === parent) return full;
    parent = dirname(parent);
  }
}

export async function compareTree(dir: string, files: RenderedFile[]): Promise<TreeComparison> {
  for (const f of files) await pathUnder(dir, f.path);
  const diffs: string[] = [];
  const changed: string[] = [];
  for (const f of [...files].sort((a, b) => a.path.localeCompare(b.path))) {
    const current = await readIfExists(join(dir, f.path));
    if (current === f.content) continue;
    changed.push(f.path);
    diffs.push(unifiedDiff(current ?? '', f.content, current === undefined ? '/dev/null' : `a/${f.path}`, `b/${f.path}`));
  }
  const rendered = new Set(files.map((f) => f.path));
  const extra = (await listTree(dir)).filter((p) => !rendered.has(p));
  return { diffs, changed, extra };
}

/** Writes every file that differs; returns the paths written. */
export async function writeTree(dir: string, files: RenderedFile[]): Promise<string[]> {
  const written: string[] = [];
  for (const f of files) await pathUnder(dir, f.path);
  for (const f of files) {
    const path = await pathUnder(dir, f.path);
    if ((await readIfExists(path)) === f.content) continue;
    await mkdir(dirname(path), { recursive: true });
    await writeFileAtomic(path, f.content);
    written.push(f.path);
  }
  return written;
}
