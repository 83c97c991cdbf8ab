// Publishes VIP states as files, in the order that keeps readers safe: the new file is written
// (atomically) before the opposite one is removed, so a reader never sees neither file, and the
// moment with both means down.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { removeIfExists, writeFileAtomic } from '../sys/atomic-file.ts';
import { makeDirs } from '../sys/make-dir.ts';
import { serializeRecord, stateFileName, type StateRecord } from './state-record.ts';

export class StateFiles {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** Creates the directory (mode 0755) if missing; also called before writes, so a removed directory comes back. */
  async ensureDir(): Promise<void> {
    await makeDirs(this.dir, 0o755);
  }

  /** Writes the record for one VIP, then removes the opposite file. */
  async publish(vip: string, record: StateRecord): Promise<void> {
    await this.ensureDir();
    const other = record.state === 'up' ? 'down' : 'up';
    await writeFileAtomic(join(this.dir, stateFileName(vip, record.state)), serializeRecord(record));
    await removeIfExists(join(this.dir, stateFileName(vip, other)));
  }

  /** Names in the directory, for tests and status. */
  async list(): Promise<string[]> {
    try {
      return (await readdir(this.dir)).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }
}
