// Decides, from the state directory's files, whether each VIP is up or down (pure).
// A VIP is up only with `<VIP>.up`, no `<VIP>.down`, and a fresh heartbeat when the file has one.
// With neither file the answer is a setting: down (Azure's script, which redirects only `.up`
// VIPs), or up (GCP's script, which withdraws only VIPs with a `.down` file).
import { canonicalVip } from '../watch/vip-address.ts';
import { parseBeat, parseBeatFileName, parseRecord, parseStateFileName } from '../watch/state-record.ts';

export type FileState = 'up' | 'down' | 'both' | 'none';

/** One directory entry as read: its name and content ('' for empty files). */
export interface StateFile {
  name: string;
  content: string;
  /** The file was larger than any state file can be; its content was not read. */
  tooLarge?: boolean;
  /** The file could not be read (its name still counts: a `.down` is down, a `.up` is not trusted). */
  error?: string;
}

export interface VipState {
  vip: string;
  family: 4 | 6;
  file: FileState;
  /** Age of the `.up` file's heartbeat; absent for empty (plain) files and for down VIPs. */
  heartbeatAgeMs?: number;
  up: boolean;
  reason: string;
}

export interface VipStateOptions {
  nowMs: number;
  /** A heartbeat older than this (or this far in the future) means down; 0 turns the check off. */
  staleAfterMs: number;
  /** Only these VIPs are reported (each one, file or not); undefined: every VIP named by a file. */
  managed?: readonly string[];
  /** A managed VIP with neither file: 'down' (default, Azure's script) or 'up' (GCP's script). */
  withoutStateFile?: 'up' | 'down';
  /** `<VIP>.beat` files from the heartbeat directory. */
  beats?: readonly StateFile[];
}

export interface VipStateDecision {
  vips: VipState[];
  /** Names that look like state files but do not name a valid VIP, or files too large to be one (to be logged once). */
  badNames: string[];
  /** When a fresh heartbeat turns stale, so the caller can look again then; undefined: never. */
  nextChangeAtMs?: number;
}

/** Temporary files of atomic writers (".x.tmp", "x.tmp") are never state files. */
function isTemporary(name: string): boolean {
  return name.startsWith('.') || name.endsWith('.tmp');
}

export function decideVipStates(files: readonly StateFile[], opts: VipStateOptions): VipStateDecision {
  const seen = new Map<string, { up?: string; down?: string }>();
  const badNames: string[] = [];
  for (const f of files) {
    if (isTemporary(f.name)) continue;
    const parsed = parseStateFileName(f.name);
    if (!parsed) {
      if (/\.(up|down)$/.test(f.name)) badNames.push(f.name);
      continue;
    }
    const untrusted = f.tooLarge === true || f.error !== undefined;
    if (untrusted) badNames.push(f.name);
    const entry = seen.get(parsed.vip) ?? {};
    // A `.up` too large or unreadable is not trusted as up; such a `.down` still means down.
    entry[parsed.state] = untrusted && parsed.state === 'up' ? TOO_LARGE : f.content;
    seen.set(parsed.vip, entry);
  }
  const beats = new Map<string, string>();
  for (const b of opts.beats ?? []) {
    const vip = parseBeatFileName(b.name);
    if (vip !== undefined && !b.tooLarge) beats.set(vip, b.content);
  }
  const names = opts.managed ? [...new Set(opts.managed.map((v) => canonicalVip(v)).filter((v): v is string => v !== undefined))] : [...seen.keys()];
  let nextChangeAtMs: number | undefined;
  const vips = names.sort(compareVips).map((vip) => {
    const state = decideOne(vip, seen.get(vip) ?? {}, beats.get(vip), opts);
    if (state.staleAtMs !== undefined) nextChangeAtMs = Math.min(nextChangeAtMs ?? Infinity, state.staleAtMs);
    return state.vip;
  });
  return { vips, badNames, nextChangeAtMs };
}

const TOO_LARGE = '\u0000too large';

function decideOne(
  vip: string,
  files: { up?: string; down?: string },
  beatText: string | undefined,
  opts: VipStateOptions,
): { vip: VipState; staleAtMs?: number } {
  const family = vip.includes(':') ? 6 : 4;
  const hasUp = files.up !== undefined;
  const hasDown = files.down !== undefined;
  const file: FileState = hasUp && hasDown ? 'both' : hasUp ? 'up' : hasDown ? 'down' : 'none';
  const base = { vip, family, file } as const;
  if (file === 'none') {
    return opts.withoutStateFile === 'up'
      ? { vip: { ...base, up: true, reason: 'no state file: up (only a .down file withdraws, as gcp-routes.sh does)' } }
      : { vip: { ...base, up: false, reason: 'no state file' } };
  }
  if (file === 'down') return { vip: { ...base, up: false, reason: 'down file' } };
  // The old watcher writes .down before removing .up, so both at once is on the way down.
  if (file === 'both') return { vip: { ...base, up: false, reason: 'both files: down wins' } };
  if (files.up === TOO_LARGE) return { vip: { ...base, up: false, reason: 'up file too large to be a state file, or unreadable: not trusted' } };
  const record = parseRecord(files.up ?? '');
  if (!record) return { vip: { ...base, up: true, reason: 'up file (no heartbeat)' } };
  let beatMs = Date.parse(record.heartbeat);
  let hint = '';
  if (record.heartbeats === 'separate') {
    // Only a beat from the same watcher and verdict counts; a beat left by another process does not.
    const beat = beatText === undefined ? undefined : parseBeat(beatText);
    if (beat && beat.pid === record.pid && beat.generation === record.generation) beatMs = Math.max(beatMs, Date.parse(beat.heartbeat));
    // The usual cause: the heartbeat directory is not shared between the watcher and us.
    else if (beatText === undefined)
      hint = ` (no ${vip}.beat in the heartbeat directory: mount <state-dir>-heartbeat, or the --heartbeat-dir given to kubeward watch, here too)`;
  }
  const ageMs = opts.nowMs - beatMs;
  if (opts.staleAfterMs <= 0) return { vip: { ...base, heartbeatAgeMs: ageMs, up: true, reason: 'up file' } };
  if (ageMs > opts.staleAfterMs) {
    return { vip: { ...base, heartbeatAgeMs: ageMs, up: false, reason: `heartbeat ${Math.round(ageMs / 1000)}s old: stale${hint}` } };
  }
  if (ageMs < -opts.staleAfterMs) {
    return { vip: { ...base, heartbeatAgeMs: ageMs, up: false, reason: 'heartbeat in the future: clocks disagree' } };
  }
  return { vip: { ...base, heartbeatAgeMs: ageMs, up: true, reason: 'up file, fresh heartbeat' }, staleAtMs: beatMs + opts.staleAfterMs + 1 };
}

/** IPv4 before IPv6, then by text: a stable order for rules and status. */
export function compareVips(a: string, b: string): number {
  const fa = a.includes(':') ? 6 : 4;
  const fb = b.includes(':') ? 6 : 4;
  return fa - fb || (fa === 4 ? compareV4(a, b) : a.localeCompare(b));
}

function compareV4(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 4; i++) if (pa[i] !== pb[i]) return pa[i]! - pb[i]!;
  return 0;
}
