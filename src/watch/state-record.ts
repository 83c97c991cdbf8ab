// The state-file contract shared by `kubeward watch` (writer) and `kubeward routes` (reader):
// `<VIP>.up` / `<VIP>.down` in one directory, each holding one JSON line. Empty files, as older
// watchers write them, are valid too and mean plain up/down without a heartbeat.
import { checkVip } from './vip-address.ts';

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
  /**
   * 'separate': this file is written on transitions only and the later heartbeats go to
   * `<VIP>.beat` in the heartbeat directory (outside the state directory, so OpenShift's consumers,
   * which watch the state directory, are not woken every few seconds). Absent: `heartbeat` here
   * is rewritten every beat (a watcher run with --heartbeat-dir state-dir).
   */
  heartbeats?: 'separate';
}

/** A `<VIP>.beat` file: the watcher that wrote the state file is still alive. */
export interface BeatRecord {
  pid: number;
  generation: number;
  heartbeat: string;
}

export const BEAT_SUFFIX = '.beat';

/**
 * A state or heartbeat directory as configured: absolute, at most 1024 characters, no control
 * characters (it is logged and shown in /status, where a newline would forge a line).
 */
export function isDirectoryPath(s: string): boolean {
  if (typeof s !== 'string' || !s.startsWith('/') || s.length > 1024) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return false;
  }
  return true;
}

export function beatFileName(vip: string): string {
  return `${vip}${BEAT_SUFFIX}`;
}

/**
 * Where heartbeats go unless configured: next to the state directory, never inside it, because
 * OpenShift's gcp-routes.sh waits with `inotifywait -r` on the whole tree and the Azure path unit
 * fires on any change in the directory.
 */
export function defaultHeartbeatDir(stateDir: string): string {
  return `${stateDir.replace(/\/+$/, '') || '/'}-heartbeat`;
}

export function parseBeatFileName(name: string): string | undefined {
  if (!name.endsWith(BEAT_SUFFIX)) return undefined;
  const r = checkVip(name.slice(0, -BEAT_SUFFIX.length));
  return r.ok ? r.vip : undefined;
}

export function serializeBeat(b: BeatRecord): string {
  return JSON.stringify(b) + '\n';
}

export function parseBeat(text: string): BeatRecord | undefined {
  try {
    const v = JSON.parse(text) as Partial<BeatRecord>;
    if (typeof v.pid === 'number' && typeof v.generation === 'number' && typeof v.heartbeat === 'string' && !Number.isNaN(Date.parse(v.heartbeat))) {
      return { pid: v.pid, generation: v.generation, heartbeat: v.heartbeat };
    }
  } catch {
    // not one of ours
  }
  return undefined;
}

export function stateFileName(vip: string, state: PublishedState): string {
  return `${vip}.${state}`;
}

/** Parses a directory entry name: a VIP state file, or undefined for anything else (a name that is not a valid VIP included). */
export function parseStateFileName(name: string): { vip: string; state: PublishedState } | undefined {
  const m = /^(.+)\.(up|down)$/.exec(name);
  if (!m) return undefined;
  const r = checkVip(m[1]!);
  return r.ok ? { vip: r.vip, state: m[2] as PublishedState } : undefined;
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
