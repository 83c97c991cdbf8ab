// Reads the state directory and watches it with inotify (fs.watch). The watch only says "look
// again"; every look is a full read, so a missed or merged event costs nothing but latency, and
// the periodic resync covers what inotify cannot see (the directory replaced, events dropped).
import { constants, watch, type FSWatcher } from 'node:fs';
import { mkdir, open, readdir } from 'node:fs/promises';
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

  /** Where `<VIP>.beat` files are read from (never watched: heartbeats only move staleness, which is timed). */
  readonly heartbeatDir: string | undefined;

  constructor(dir: string, onChange: () => void, log: Logger, heartbeatDir?: string) {
    this.dir = dir;
    this.#onChange = onChange;
    this.#log = log;
    this.heartbeatDir = heartbeatDir;
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
  read(): Promise<StateFile[]> {
    return readSmallFiles(this.dir, (name) => /\.(up|down)$/.test(name));
  }

  /** The `<VIP>.beat` files of the heartbeat directory ([] when there is none). */
  readBeats(): Promise<StateFile[]> {
    return this.heartbeatDir === undefined ? Promise.resolve([]) : readSmallFiles(this.heartbeatDir, (name) => name.endsWith('.beat'));
  }

  close(): void {
    this.#closed = true;
    this.#watcher?.close();
    this.#watcher = undefined;
  }
}

/**
 * Reads the regular files of a directory whose names pass `wanted`, each bounded: the size is
 * checked on the open descriptor before anything is read, and at most MAX_CONTENT + 1 bytes are
 * read (a file growing meanwhile cannot make us read more). O_NONBLOCK keeps a FIFO put there from
 * hanging the open; such a file is skipped as not regular.
 */
async function readSmallFiles(dir: string, wanted: (name: string) => boolean): Promise<StateFile[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const files: StateFile[] = [];
  for (const e of entries) {
    if (!e.isFile() || e.name.startsWith('.') || !wanted(e.name)) continue;
    let fh;
    try {
      fh = await open(join(dir, e.name), constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ELOOP') continue;
      // One file we cannot open must not stop the others from being read.
      files.push({ name: e.name, content: '', error: describeError(err) });
      continue;
    }
    try {
      const st = await fh.stat();
      if (!st.isFile()) continue;
      if (st.size > MAX_CONTENT) {
        files.push({ name: e.name, content: '', tooLarge: true });
        continue;
      }
      const buf = Buffer.alloc(Math.min(MAX_CONTENT, st.size) + 1);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      // More than the size said: the file grew while we read it, so what we have is not all of it.
      files.push(
        bytesRead > Math.min(MAX_CONTENT, st.size)
          ? { name: e.name, content: '', tooLarge: true }
          : { name: e.name, content: buf.subarray(0, bytesRead).toString('utf8') },
      );
    } catch (err) {
      files.push({ name: e.name, content: '', error: describeError(err) });
    } finally {
      await fh.close();
    }
  }
  return files;
}
