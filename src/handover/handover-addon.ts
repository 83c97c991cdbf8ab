// The hand-over's five calls into native/relay.c (see its "listener hand-over" part), typed, from
// the one load of the addon per process (src/proxy/relay/native-addon.ts). Each answers a value
// or -errno and never throws for a peer's doing.
import { getSystemErrorName } from 'node:util';
import { NativeAddon } from '../proxy/relay/native-addon.ts';
import { addonCandidates } from '../proxy/relay/native-relay.ts';

export interface HandoverAddon {
  handoverConnect(path: string): number;
  handoverSend(fd: number, data: Buffer, fds: number[]): number;
  handoverReceive(fd: number, maxBytes: number, timeoutMs: number): [data: Buffer, fds: number[], truncated: boolean] | number;
  handoverPeer(fd: number): [pid: number, uid: number, gid: number] | number;
  handoverClose(fd: number): number;
}

const FUNCTIONS = ['handoverConnect', 'handoverSend', 'handoverReceive', 'handoverPeer', 'handoverClose'] as const;

/** The addon's hand-over calls, or why there are none (then the process binds as usual). */
export function loadHandoverAddon(native: NativeAddon = new NativeAddon(addonCandidates())): HandoverAddon | { unusable: string } {
  const addon = native.load();
  if ('unusable' in addon) return addon;
  const missing = FUNCTIONS.find((f) => typeof addon.exports[f] !== 'function');
  if (missing) return { unusable: `${addon.path} has no ${missing}() (an addon older than this kubeward: rebuild it)` };
  return addon.exports as unknown as HandoverAddon;
}

/** -errno -> its name (ENOENT), for logs and decisions. */
export function errnoName(negative: number): string {
  try {
    return getSystemErrorName(negative);
  } catch {
    return `errno ${-negative}`;
  }
}
