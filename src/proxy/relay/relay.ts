// The proxy's data path as a frontend sees it: one interface, three implementations beside it, as
// HAProxy's transports sit behind its xprt_ops. socket-path.ts keeps net.Socket on both legs,
// handle-path.ts bare libuv handles, native-path.ts accepts and connects as the handle path and
// moves the established bytes in C. The frontend accepts, picks an upstream and retries; the relay
// holds the legs and their read slices, dials, joins and closes. Which one runs is chosen once per
// process (choose-relay.ts).
import type { HostPort } from '../../config/fields.ts';
import type { ProbeReason } from '../../probe/probe-result.ts';
import type { AcceptedHandle } from '../adopt-socket.ts';
import type { RelayedConnection, RelayOwner, RelayTiming } from './relayed-connection.ts';

/**
 * Which data path the proxy runs: `handle` (bare libuv handles), `socket` (net.Socket on both legs)
 * or `native` (accept and connect as `handle`, the established bytes in C: native-relay.ts).
 */
export type RelayPath = 'handle' | 'socket' | 'native';

/** How one dial ended; on success the relay keeps the upstream leg for join() or discardUpstream(). */
export type DialResult = { ok: true; latencyMs: number } | { ok: false; reason: ProbeReason; detail: string; latencyMs: number };

/** One frontend's data path. */
export interface Relay {
  /** The path this relay runs (a connection it cannot take that way runs on the next one down, see the implementations). */
  readonly path: RelayPath;
  /**
   * An accepted connection, nothing read from it yet, as a client waiting for an upstream; undefined
   * when it could not be taken (it is closed, and nothing of it is left to give back).
   */
  accept(accepted: AcceptedHandle): PendingClient | undefined;
}

/**
 * A client connection between accept and join. Exactly one of join() and abandon() ends it; between
 * dials, a connected upstream that is not joined goes to discardUpstream().
 */
export interface PendingClient {
  /** The client went away while an upstream was dialled. */
  readonly gone: boolean;
  /** Dials one upstream within timeoutMs (0 or less: the OS default). Never rejects. */
  dial(target: HostPort, timeoutMs: number): Promise<DialResult>;
  /** Joins the client with the upstream the last dial connected: the bytes flow from now on. */
  join(upstreamKey: string, timing: RelayTiming): RelayedConnection;
  /** Closes the upstream the last dial connected (the client left, or the frontend is going away). */
  discardUpstream(): void;
  /** No upstream is joined: the client is closed; `freed` runs once its descriptor is released. */
  abandon(freed: () => void): void;
}

/** Makes the relay of one frontend; its connections report to `owner`. */
export interface RelayFactory {
  readonly path: RelayPath;
  open(frontend: string, owner: RelayOwner): Relay;
}
