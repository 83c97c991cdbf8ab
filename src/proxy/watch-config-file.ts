// Calls back when a config file's content changes. Watches the directory, not the file: editors
// and config management replace files by rename, and a Kubernetes ConfigMap volume swaps a
// `..data` symlink, so a watch on the old inode would go silent.
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname } from 'node:path';

export interface ConfigFileWatcher {
  close(): void;
}

/**
 * Debounces bursts of events (a write is often several), then compares the content with what was
 * seen last, so a touch or an unrelated file in the directory does not reload.
 */
export async function watchConfigFile(path: string, onChange: () => void, debounceMs = 200): Promise<ConfigFileWatcher> {
  const digest = async (): Promise<string> =>
    createHash('sha256')
      .update(await readFile(path).catch(() => Buffer.alloc(0)))
      .digest('hex');
  let last = await digest();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const check = async (): Promise<void> => {
    const now = await digest();
    if (closed || now === last) return;
    last = now;
    onChange();
  };
  const watcher: FSWatcher = watch(dirname(path), { persistent: false }, () => {
    clearTimeout(timer);
    timer = setTimeout(() => void check(), debounceMs);
  });
  watcher.on('error', () => {}); // a removed directory: nothing left to watch; SIGHUP still works
  return {
    close: () => {
      closed = true;
      clearTimeout(timer);
      watcher.close();
    },
  };
}
