// The admin listener's connection budget. A cap that refuses newcomers (net.Server's
// maxConnections) lets any local process fill it with idle connections and fail kubelet's probes,
// which then restarts the daemon. Here a newcomer at the cap displaces the connection that has been
// idle longest (no request in flight: it never sent one, is still sending its headers, or waits
// between keep-alive requests). Probes send their request as soon as they connect and are answered
// without I/O, so idle connections, however many, never cost a probe its slot; only connections
// with a request in flight hold one, and those are answered within the request timeout.
import type { Socket } from 'node:net';

interface Tracked {
  inFlight: number;
}

/** What to do with a connection arriving at `open` tracked ones (pure). */
export function admitConnection(open: number, cap: number, oldestIdle: Socket | undefined): { admit: true; evict?: Socket } | { admit: false } {
  if (open < cap) return { admit: true };
  if (oldestIdle) return { admit: true, evict: oldestIdle };
  return { admit: false };
}

export class AdminConnections {
  readonly #cap: number;
  /** Insertion order is idle age: a connection moves to the end when its last request ends. */
  readonly #sockets = new Map<Socket, Tracked>();
  /** Connections closed to make room, for the tests and the log. */
  evicted = 0;
  refused = 0;

  constructor(cap: number) {
    this.#cap = cap;
  }

  get open(): number {
    return this.#sockets.size;
  }

  /** A new connection: admitted (maybe displacing the longest-idle one) or destroyed. */
  add(socket: Socket): void {
    const verdict = admitConnection(this.#sockets.size, this.#cap, this.#oldestIdle());
    if (!verdict.admit) {
      this.refused++;
      socket.destroy();
      return;
    }
    if (verdict.evict) {
      this.evicted++;
      this.#sockets.delete(verdict.evict);
      verdict.evict.destroy();
    }
    this.#sockets.set(socket, { inFlight: 0 });
    socket.once('close', () => this.#sockets.delete(socket));
  }

  requestStarted(socket: Socket): void {
    const t = this.#sockets.get(socket);
    if (t) t.inFlight++;
  }

  requestEnded(socket: Socket): void {
    const t = this.#sockets.get(socket);
    if (!t) return;
    t.inFlight = Math.max(0, t.inFlight - 1);
    // Idle from now on: the youngest idle connection.
    this.#sockets.delete(socket);
    if (!socket.destroyed) this.#sockets.set(socket, t);
  }

  #oldestIdle(): Socket | undefined {
    for (const [socket, t] of this.#sockets) if (t.inFlight === 0) return socket;
    return undefined;
  }
}
