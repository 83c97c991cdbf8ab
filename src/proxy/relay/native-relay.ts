// --relay native: the established connection's bytes move in C (native/relay.c) on Node's own libuv
// loop, and JavaScript is not entered per chunk. The handle path (handle-relay.ts) still accepts and
// connects; once both legs are connected, their sockets are handed to the addon (it dup()s the two
// fds, then the handles are closed here, so each socket has one epoll watcher) and JavaScript keeps
// one small object per connection for the connection set. The addon calls back only when a
// connection ends and, while the first-byte watch is on, at the first bytes of each direction;
// counters and the idle flag are read from it on demand (the idle sweep, metrics).
//
// The addon is looked for next to the sources (build/native/relay.node, scripts/build-native.ts)
// and next to the build (dist/native/relay.node), unless the caller names a file (the CLI takes it
// from KUBEWARD_NATIVE_RELAY: the sanitizer build). One instance per process, whatever the number
// of proxies in it: the process's owner (the CLI mode, the demo, a test file) makes one
// NativeRelayLoader and hands it to every proxy it starts.
import { fileURLToPath } from 'node:url';
import { NativeAddon } from './native-addon.ts';
import { endFirstByteWatch, noteFirstBytes } from './first-byte-watch.ts';
import { SharedConnectionState, type RelayOptions, type RelayOwner } from './relayed-connection.ts';
import type { TcpHandle } from './handle-internals.ts';

/** What native/relay.c exports (see its js_* functions). */
interface RelayAddon {
  init(onEvent: (slot: number, kind: number, a: number, b: number, c: number) => void, readBytes: number): number;
  open(clientFd: number, upstreamFd: number, watchFirstByte: boolean): number;
  destroy(slot: number): void;
  moved(slot: number, fromClient: boolean): number;
  active(slot: number, clear: boolean): boolean;
  unwatch(slot: number): void;
  stats(): [open: number, residueBytes: number];
}

// The addon's trim() is the process's, not the relay's: NativeAddon.mallocTrim() offers it.
const ADDON_FUNCTIONS = ['init', 'open', 'destroy', 'moved', 'active', 'unwatch', 'stats'] as const;

// Event kinds and end reasons, as native/relay.c numbers them.
const EV_END = 0;
const EV_CLIENT_FIRST = 1;
const EV_UPSTREAM_FIRST = 2;
export const END_REASONS = ['eof', 'error', 'destroyed'] as const;
export type NativeEndReason = (typeof END_REASONS)[number];

/** Where the addon may be, most specific first; `explicit`: that file alone. */
export function addonCandidates(explicit?: string, moduleUrl: string = import.meta.url): string[] {
  if (explicit) return [explicit];
  return [
    // dist/main.js or dist/chunks/*.js -> dist/native/relay.node (the build's own first)
    fileURLToPath(new URL('./native/relay.node', moduleUrl)),
    fileURLToPath(new URL('../native/relay.node', moduleUrl)),
    // src/proxy/relay/native-relay.ts -> build/native/relay.node
    fileURLToPath(new URL('../../../build/native/relay.node', moduleUrl)),
  ];
}

/** Where a proxy gets the process's native relay (a NativeRelayLoader, or a stand-in in tests). */
export interface NativeRelaySource {
  load(readBytes: number): NativeRelay | { unusable: string };
}

/**
 * The process's native relay, loaded at the first load() and the same one after. A process makes
 * one: the addon keeps one instance per process, and loading it again re-initialises the C side,
 * which then sends the first relay's events to the second. Nothing to close: a loaded addon stays
 * in the process, and each proxy closes the connections it opened.
 */
export class NativeRelayLoader implements NativeRelaySource {
  readonly #addon: NativeAddon;
  #loaded: NativeRelay | { unusable: string } | undefined;

  /** `addon`: the process's one load of the addon, shared with the listener hand-over. */
  constructor(addon: NativeAddon = new NativeAddon(addonCandidates())) {
    this.#addon = addon;
  }

  /** `readBytes` counts at the first call only: the addon's read buffer is made once. */
  load(readBytes = 64 * 1024): NativeRelay | { unusable: string } {
    return (this.#loaded ??= loadNativeRelay(readBytes, this.#addon));
  }
}

/** Loads and initialises the addon, or says why it cannot run; a NativeRelayLoader calls it once per process. */
function loadNativeRelay(readBytes: number, native: NativeAddon): NativeRelay | { unusable: string } {
  const addon = native.load();
  if ('unusable' in addon) return addon;
  for (const name of ADDON_FUNCTIONS) {
    if (typeof addon.exports[name] !== 'function') return { unusable: `${addon.path} has no ${name}()` };
  }
  try {
    return new NativeRelay(addon.exports as unknown as RelayAddon, readBytes, addon.path);
  } catch (err) {
    return { unusable: `initialising ${addon.path} failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** The addon as the frontends use it: opens connections, routes its events to them. */
export class NativeRelay {
  readonly path: string;
  /** Bytes of C state per connection (the addon's struct), for the docs' memory figures. */
  readonly connectionBytes: number;
  readonly #addon: RelayAddon;
  readonly #bySlot: (NativeConnection | undefined)[] = [];

  constructor(addon: RelayAddon, readBytes: number, path: string) {
    this.#addon = addon;
    this.path = path;
    this.connectionBytes = addon.init((slot, kind, a, b, c) => this.#onEvent(slot, kind, a, b, c), readBytes);
  }

  /** Connections open in C and bytes waiting in their residues. */
  get stats(): { open: number; residueBytes: number } {
    const [open, residueBytes] = this.#addon.stats();
    return { open, residueBytes };
  }

  /**
   * Takes over two connected handles that have not read yet: on success the handles are closed
   * (the addon holds dups of their sockets) and the connection relays; on failure the handles are
   * left as they were and the reason is returned (the caller relays them on the handle path).
   */
  open(client: TcpHandle, upstream: TcpHandle, upstreamKey: string, owner: RelayOwner, opts: RelayOptions): NativeConnection | string {
    const cfd = client.fd;
    const ufd = upstream.fd;
    if (typeof cfd !== 'number' || typeof ufd !== 'number' || cfd < 0 || ufd < 0) return 'a handle has no file descriptor';
    const watch = (opts.firstByteTimeoutMs ?? 0) > 0;
    const slot = this.#addon.open(cfd, ufd, watch);
    if (slot < 0) return `the addon could not take the sockets (errno ${-slot})`;
    client.close();
    upstream.close();
    const conn = new NativeConnection(this.#addon, slot, upstreamKey, owner, opts);
    this.#bySlot[slot] = conn;
    return conn;
  }

  #onEvent(slot: number, kind: number, a: number, b: number, c: number): void {
    const conn = this.#bySlot[slot];
    if (conn === undefined) return;
    if (kind === EV_END) {
      // Cleared first: the owner may open a connection that gets this slot again.
      this.#bySlot[slot] = undefined;
      conn.ended_(END_REASONS[a] ?? 'error', b, c);
    } else if (kind === EV_CLIENT_FIRST || kind === EV_UPSTREAM_FIRST) {
      conn.firstBytes(kind === EV_CLIENT_FIRST);
    }
  }
}

/** One established pair relayed in C, as the connection set and the frontend see it. */
export class NativeConnection extends SharedConnectionState {
  /** How it ended, once it has (for tests and logs). */
  endReason: NativeEndReason | undefined = undefined;
  readonly #addon: RelayAddon;
  /** The addon's slot while the connection is open there; -1 once it ended. */
  #slot: number;
  #closing = false;
  #toUpstream = 0;
  #toClient = 0;

  /** `opts`' read slices are not kept: the native path reads into none of the pool's. */
  constructor(addon: RelayAddon, slot: number, upstreamKey: string, owner: RelayOwner, opts: RelayOptions) {
    super(upstreamKey, owner, { idleTimeoutMs: opts.idleTimeoutMs, startedAt: opts.startedAt, firstByteTimeoutMs: opts.firstByteTimeoutMs });
    this.#addon = addon;
    this.#slot = slot;
  }

  /** A byte moved since the idle sweep last cleared this (the addon keeps the flag). */
  get active(): boolean {
    return this.#slot >= 0 && this.#addon.active(this.#slot, false);
  }

  set active(on: boolean) {
    if (!on && this.#slot >= 0) this.#addon.active(this.#slot, true);
  }

  get bytesToUpstream(): number {
    return this.#slot >= 0 ? this.#addon.moved(this.#slot, true) : this.#toUpstream;
  }

  get bytesToClient(): number {
    return this.#slot >= 0 ? this.#addon.moved(this.#slot, false) : this.#toClient;
  }

  get ended(): boolean {
    return this.#closing;
  }

  get upstreamClosed(): boolean {
    return this.#closing;
  }

  /** Abortive close of both sockets; idempotent. The owner hears of it when the addon has closed them. */
  destroy(): void {
    if (this.#closing) return;
    this.#closing = true;
    if (this.#slot >= 0) this.#addon.destroy(this.#slot);
  }

  /** @internal The addon saw a direction's first bytes while the watch was on. */
  firstBytes(fromClient: boolean): void {
    try {
      if (this.watchingFirstByte) noteFirstBytes(this, fromClient);
      if (!this.watchingFirstByte && this.#slot >= 0) this.#addon.unwatch(this.#slot);
    } catch {
      // A callback from the loop: a throw would be uncaught. The watch simply ends.
      endFirstByteWatch(this);
    }
  }

  /** @internal The addon closed both sockets (`reason`) after moving these many bytes each way. */
  ended_(reason: NativeEndReason, toUpstream: number, toClient: number): void {
    this.#slot = -1;
    this.#closing = true;
    this.endReason = reason;
    this.#toUpstream = toUpstream;
    this.#toClient = toClient;
    try {
      this.closed();
    } catch {
      // The owner's bookkeeping threw: nothing is left open to close, and the daemon goes on.
    }
  }
}
