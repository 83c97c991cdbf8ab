// The state-file contract shared by `kubeward watch` (writer) and `kubeward routes` (reader):
// `<VIP>.up` / `<VIP>.down` in one directory, each holding one JSON line. Empty files, as older
// watchers write them, are valid too and mean plain up/down without a heartbeat.
import { isIP } from 'node:net';

export type PublishedState = 'up' | 'down';

export interface StateRecord {
  state: PublishedState;
  /** ISO-8601 time the VIP entered this state. */
  since: string;
  reason: string;
  pid: number;
  /** Counts transitions since the watcher started; a reader can tell a new verdict from a rewrite. */
  generation: number;
  /** ISO-8601 time of the watcher's last verdict; a stale heartbeat means a dead watcher. */
  heartbeat: string;
}

/** The canonical text form of an address: IPv6 compressed and lower-case, as file names use it. */
export function canonicalIp(text: string): string | undefined {
  const family = isIP(text);
  if (family === 4) return text;
  if (family === 6) return new URL(`http://[${text}]/`).hostname.slice(1, -1);
  return undefined;
}

export function stateFileName(vip: string, state: PublishedState): string {
  return `${vip}.${state}`;
}

/** Parses a directory entry name: a VIP state file, or undefined for anything else. */
export function parseStateFileName(name: string): { vip: string; state: PublishedState } | undefined {
  const m = /^(.+)\.(up|down)$/.exec(name);
  if (!m) return undefined;
  const vip = canonicalIp(m[1]!);
  return vip === undefined ? undefined : { vip, state: m[2] as PublishedState };
}

export function serializeRecord(r: StateRecord): string {
  return JSON.stringify(r) + '\n';
}

/**
 * Reads a state file's content. Empty content is a plain marker (undefined); content that is not
 * a record is also treated as a plain marker, since the file's name alone carries the state.
 */
export function parseRecord(text: string): StateRecord | undefined {
  if (text.trim() === '') return undefined;
  try {
    const v = JSON.parse(text) as Partial<StateRecord>;
    if ((v.state === 'up' || v.state === 'down') && typeof v.heartbeat === 'string' && !Number.isNaN(Date.parse(v.heartbeat))) {
      return v as StateRecord;
    }
  } catch {
    // fall through: a marker file with foreign content
  }
  return undefined;
}
