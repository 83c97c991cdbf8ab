// Picks the process's data path once, at start: the one asked for (--relay, default native) when
// this Node and build can run it, else the next one down (native -> handle -> socket), saying why
// once. The frontends then open their relays from the result and never ask which it is.
import type { Logger } from '../../base/logger.ts';
import { HandlePath } from './handle-path.ts';
import { loadRelayInternals, type RelayInternals } from './handle-internals.ts';
import { NativePath } from './native-path.ts';
import type { NativeRelay, NativeRelaySource } from './native-relay.ts';
import type { ReadBufferPool } from './read-buffer-pool.ts';
import type { RelayFactory, RelayPath } from './relay.ts';
import { SocketPath } from './socket-path.ts';

export interface ChooseRelayOptions {
  log: Logger;
  /** Read slices for every leg of the process's frontends. */
  buffers: ReadBufferPool;
  /** Finds the handle path's internals; default loadRelayInternals. */
  loadInternals?: () => ReturnType<typeof loadRelayInternals>;
  /** Finds the native relay (called only when native is asked for and the handle path runs). */
  loadNative: () => ReturnType<NativeRelaySource['load']>;
}

/** The relay factory of the path that runs (see the file header). */
export function chooseRelay(asked: RelayPath, opts: ChooseRelayOptions): RelayFactory {
  const { log, buffers } = opts;
  const internals = chooseInternals(asked, log, opts.loadInternals ?? loadRelayInternals);
  if (internals === undefined) return { path: 'socket', open: (_frontend, owner) => new SocketPath(buffers, owner) };
  const native = chooseNative(asked, log, opts.loadNative);
  if (native === undefined) return { path: 'handle', open: (_frontend, owner) => new HandlePath(internals, buffers, owner) };
  return { path: 'native', open: (frontend, owner) => new NativePath(internals, native, buffers, owner, log, frontend) };
}

/**
 * The handle path's internals when --relay handle or native and they fit this Node; undefined for
 * the socket path. A fallback is logged once, with the reason.
 */
function chooseInternals(asked: RelayPath, log: Logger, load: () => ReturnType<typeof loadRelayInternals>): RelayInternals | undefined {
  if (asked === 'socket') return undefined;
  const found = load();
  if ('unusable' in found) {
    log.warn({ relay: 'socket', reason: found.unusable }, 'the handle data path cannot run on this Node; relaying on net.Socket instead (--relay socket)');
    return undefined;
  }
  return found;
}

/** The native relay when --relay native (the handle path runs: it accepts and connects); without the addon, undefined, said once. */
function chooseNative(asked: RelayPath, log: Logger, load: () => ReturnType<NativeRelaySource['load']>): NativeRelay | undefined {
  if (asked !== 'native') return undefined;
  const found = load();
  if ('unusable' in found) {
    log.warn({ relay: 'handle', reason: found.unusable }, 'the native data path cannot run here; relaying on bare libuv handles instead (--relay handle)');
    return undefined;
  }
  return found;
}
