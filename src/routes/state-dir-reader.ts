// Reads the state directory and watches it with inotify (fs.watch). The watch only says "look
// again"; every look is a full read, so a missed or merged event costs nothing but latency, and
// the periodic resync covers what inotify cannot see (the directory replaced, events dropped).
import { watch, type FSWatcher } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../base/logger.ts';
import { describeError } from '../base/errors.ts';
import type { StateFile } from './vip-states.ts';

/** State files are one JSON line; anything much larger is not one of ours. */
const MAX_CONTENT = 64 * 1024;

export class StateDirReader {
  readonly dir: string;
  readonly #onChange: () => void;
  readonly #log: Logger;
  #watcher: FSWatcher | undefined;
  #closed = false;

  constructor(dir: string, onChange: () => void, log: Logger) {
    this.dir = dir;
    this.#onChange = onChange;
    this.#log = log;
  }

  /** True while inotify is watching; false after the directory went away (resync re-arms it). */
  get watching(): boolean {
    return this.#watcher !== undefined;
  }

  /**
   * Creates the directory if missing and starts a fresh watch on it. Called before every full read:
   * a directory deleted and made again (even with the same inode number) is then watched again, and
   * anything that changed in between is seen by the read that follows.
   */
  async ensureWatching(): Promise<void> {
    if (this.#closed) return;
    await mkdir(this.dir, { recursive: true, mode: 0o755 });
    this.#watcher?.close();
    this.#watcher = undefined;
    try {
      const w = watch(this.dir, { persistent: false }, () => this.#onChange());
      w.on('error', (err) => {
        this.#log.warn({ dir: this.dir, err: describeError(err) }, 'state directory watch failed; relying on resync until it is re-armed');
        w.close();
        if (this.#watcher === w) this.#watcher = undefined;
      });
      this.#watcher = w;
    } catch (err) {
      this.#log.warn({ dir: this.dir, err: describeError(err) }, 'cannot watch the state directory; relying on resync');
    }
  }

  /** Every regular file's name and content; files that vanish between list and read are skipped. */
  async read(): Promise<StateFile[]> {
    let entries;
    try {
      entries = await readdir(this.dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const files: StateFile[] = [];
    for (const e of entries) {
      if (!e.isFile() || e.name.startsWith('.')) continue;
      try {
        const buf = await readFile(join(this.dir, e.name));
        files.push({ name: e.name, content: buf.length > MAX_CONTENT ? '' : buf.toString('utf8') });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    return files;
  }

  close(): void {
    this.#closed = true;
    this.#watcher?.close();
    this.#watcher = undefined;
  }
}
