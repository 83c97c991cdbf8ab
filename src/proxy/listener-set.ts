// A frontend's listening sockets by address, so a reload can open new addresses before it commits
// and close removed ones without touching established connections (they are separate sockets).
import { createServer, type AddressInfo, type Server } from 'node:net';
import { UsageError, describeError } from '../base/errors.ts';
import { formatHostPort, type HostPort } from '../config/fields.ts';
import { detachHandle, takeAccepts, type AcceptedHandle } from './adopt-socket.ts';
import { listenOn } from '../handover/listen-on.ts';
import type { ListenerHandover } from '../handover/handover-session.ts';

export interface ListenerSetOptions {
  /** Frontend name, for error messages. */
  name: string;
  /** Each accepted connection, as a bare handle nothing has read from (see adopt-socket.ts). */
  onConnection: (client: AcceptedHandle) => void;
  onError: (err: Error) => void;
  /** SO_REUSEPORT: several processes share the address and the kernel spreads connections (Linux). */
  reusePort?: boolean;
  /**
   * Open no socket: a worker of `--workers` gets its connections from the primary, which alone
   * listens (proxy-workers.ts). The configured addresses are still recorded as if bound, so a
   * reload adds and removes them the same way and `addresses` names where clients connect.
   */
  passive?: boolean;
  /** --handover-socket: listen on the predecessor's sockets where it offered them, offer ours to a successor. */
  handover?: ListenerHandover;
}

export class ListenerSet {
  readonly #opts: ListenerSetOptions;
  /** Keyed by the configured address (port 0 stays 0), valued with the bound one (no server when passive). */
  readonly #servers = new Map<string, { server?: Server; bound: HostPort }>();

  constructor(opts: ListenerSetOptions) {
    this.#opts = opts;
  }

  /** Bound addresses, in the order they were opened. */
  get addresses(): HostPort[] {
    return [...this.#servers.values()].map((s) => s.bound);
  }

  keys(): string[] {
    return [...this.#servers.keys()];
  }

  /**
   * Opens the addresses not open yet. All or nothing: on a failure the ones opened by this call are
   * closed again and a UsageError names the address. Returns the keys it opened.
   */
  async open(addrs: readonly HostPort[]): Promise<string[]> {
    const opened: string[] = [];
    try {
      for (const addr of addrs) {
        const key = formatHostPort(addr);
        if (this.#servers.has(key)) continue;
        if (this.#opts.passive) {
          this.#servers.set(key, { bound: { ...addr } });
          opened.push(key);
          continue;
        }
        const server = await this.#listen(addr);
        this.#servers.set(key, { server, bound: { host: addr.host, port: (server.address() as AddressInfo).port } });
        opened.push(key);
      }
    } catch (err) {
      await this.close(opened);
      throw err;
    }
    return opened;
  }

  /** Stops accepting on these addresses; resolves when their servers have closed. */
  close(keys: readonly string[]): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const key of keys) {
      const s = this.#servers.get(key);
      if (!s) continue;
      this.#servers.delete(key);
      // server.close()'s callback waits for connections the server handed out; the proxy's own
      // ConnectionSet decides about those, so only stop accepting here.
      const { server } = s;
      if (server) closing.push(new Promise<void>((resolve) => server.close(() => resolve())));
    }
    return Promise.all(closing).then(() => undefined);
  }

  closeAll(): Promise<void> {
    return this.close(this.keys());
  }

  async #listen(addr: HostPort): Promise<Server> {
    // noDelay and keepAlive for each accepted handle: probes every 1 s (libuv), 10 times, after the
    // 15 s idle delay. pauseOnConnect: nothing is read before the proxy's own socket has the handle.
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true, noDelay: true, keepAlive: true, keepAliveInitialDelay: 15_000 });
    try {
      await listenOn(server, addr, { ipv6Only: addr.host.includes(':'), reusePort: this.#opts.reusePort }, this.#opts.handover);
    } catch (err) {
      throw new UsageError(`frontend "${this.#opts.name}": cannot listen on ${formatHostPort(addr)} (${describeError(err)}); free the port or pick another`, {
        cause: err,
      });
    }
    server.on('error', this.#opts.onError);
    const { onConnection } = this.#opts;
    if (!takeAccepts(server, { noDelay: true, keepAliveSeconds: 15 }, onConnection)) {
      server.on('connection', (accepted) => {
        const handle = detachHandle(accepted);
        if (handle) onConnection(handle);
      });
    }
    return server;
  }
}
