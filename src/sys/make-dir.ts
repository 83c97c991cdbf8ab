// mkdir -p without Node's recursive mkdir, which never returns for some paths: under /proc,
// mkdir(2) answers ENOENT while the parent exists, and Node retries forever (the watcher hung
// with --state-dir /proc/x). Each missing level is created once; the first failure is thrown.
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

export async function makeDirs(path: string, mode = 0o755): Promise<void> {
  const missing: string[] = [];
  let dir = resolve(path);
  for (;;) {
    try {
      const s = await stat(dir);
      if (!s.isDirectory()) throw Object.assign(new Error(`ENOTDIR: ${dir} is not a directory`), { code: 'ENOTDIR' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      missing.push(dir);
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  for (const d of missing.reverse()) {
    try {
      await mkdir(d, { mode });
    } catch (err) {
      // Another process may have made it in between.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
