// --relay native: accepts and dials as the handle path, then hands the two connected handles to the
// C relay (native-relay.ts); their read slices, never read into, go back at once. A pair the addon
// refuses relays on the handles, and the first refusal is logged.
import type { Logger } from '../../base/logger.ts';
import type { RelayInternals, TcpHandle } from './handle-internals.ts';
import { HandlePath } from './handle-path.ts';
import type { NativeRelay } from './native-relay.ts';
import type { ReadBufferPool } from './read-buffer-pool.ts';
import type { RelayPath } from './relay.ts';
import type { RelayedConnection, RelayOwner, SlicedRelayOptions } from './relayed-connection.ts';

export class NativePath extends HandlePath {
  override readonly path: RelayPath = 'native';
  readonly #native: NativeRelay;
  readonly #log: Logger;
  readonly #frontend: string;
  #refusedLogged = false;

  constructor(internals: RelayInternals, native: NativeRelay, buffers: ReadBufferPool, owner: RelayOwner, log: Logger, frontend: string) {
    super(internals, buffers, owner);
    this.#native = native;
    this.#log = log;
    this.#frontend = frontend;
  }

  override join(client: TcpHandle, upstream: TcpHandle, upstreamKey: string, opts: SlicedRelayOptions): RelayedConnection {
    const conn = this.#native.open(client, upstream, upstreamKey, this, opts);
    if (typeof conn !== 'string') {
      this.buffers.give(opts.clientSlice);
      this.buffers.give(opts.upstreamSlice);
      return conn;
    }
    if (!this.#refusedLogged) {
      this.#refusedLogged = true;
      this.#log.warn({ frontend: this.#frontend, reason: conn }, 'the native data path refused a connection; it relays on bare libuv handles (logged once)');
    }
    return super.join(client, upstream, upstreamKey, opts);
  }
}
