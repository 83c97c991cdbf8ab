// Publishes VIP states as files, in the order that keeps readers safe: the new file is written
// (atomically) before the opposite one is removed, so a reader never sees neither file, and the
// moment with both means down. With a heartbeat directory, the state files change on transitions
// only and heartbeats go to `<VIP>.beat` there: OpenShift's consumers watch the state directory
// (the Azure path unit's PathChanged=/run/cloud-routes/, gcp-routes.sh's `inotifywait -r`) and
// would otherwise run on every beat.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { removeIfExists, writeFileAtomic } from '../sys/atomic-file.ts';
import { makeDirs } from '../sys/make-dir.ts';
import { beatFileName, serializeBeat, serializeRecord, stateFileName, type StateRecord } from './state-record.ts';

export class StateFiles {
  readonly dir: string;
  /** Where heartbeats go; undefined: the state file itself is rewritten every beat (the older way). */
  readonly heartbeatDir: string | undefined;

  constructor(dir: string, heartbeatDir?: string) {
    this.dir = dir;
    this.heartbeatDir = heartbeatDir;
  }

  /** Creates the directory (mode 0755) if missing; also called before writes, so a removed directory comes back. */
  async ensureDir(): Promise<void> {
    await makeDirs(this.dir, 0o755);
  }

  /** Writes the record for one VIP, then removes the opposite file. */
  async publish(vip: string, record: StateRecord): Promise<void> {
    await this.ensureDir();
    const other = record.state === 'up' ? 'down' : 'up';
    const written: StateRecord = this.heartbeatDir === undefined ? record : { ...record, heartbeats: 'separate' };
    await writeFileAtomic(join(this.dir, stateFileName(vip, record.state)), serializeRecord(written));
    await removeIfExists(join(this.dir, stateFileName(vip, other)));
  }

  /** Says the watcher behind the current verdict is alive, without touching the state directory when it can. */
  async beat(vip: string, record: StateRecord): Promise<void> {
    if (this.heartbeatDir === undefined) return this.publish(vip, record);
    await makeDirs(this.heartbeatDir, 0o755);
    await writeFileAtomic(
      join(this.heartbeatDir, beatFileName(vip)),
      serializeBeat({ pid: record.pid, generation: record.generation, heartbeat: record.heartbeat }),
    );
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
