// The first-byte watch of a relayed connection, for both data paths (handle-relay.ts and
// forward-connection.ts): after the client's first bytes, the upstream must answer within
// firstByteTimeoutMs or the owner is told (the passive hang signal, Frontend's noAnswer). The state
// lives on the connection itself: no object per connection, one timer only while a client waits.

/** What the watch reads and keeps on a connection. */
export interface FirstByteWatched {
  /** The watch is on: the relays call noteFirstBytes for every chunk (one property test per chunk). */
  watchingFirstByte: boolean;
  firstByteTimer: NodeJS.Timeout | undefined;
  readonly firstByteTimeoutMs: number;
  readonly bytesToClient: number;
  /** The upstream leg is closed or closing: no answer can come, and none is missed. */
  readonly upstreamClosed: boolean;
  /** Tells the owner the upstream stayed silent (the connection itself is left alone). */
  noAnswer(): void;
}

/**
 * A chunk moved while the watch is on: the client's arms the timer unless the upstream has spoken
 * already; the upstream's ends the watch.
 */
export function noteFirstBytes(conn: FirstByteWatched, fromClient: boolean): void {
  if (!fromClient || conn.bytesToClient > 0) {
    endFirstByteWatch(conn);
    return;
  }
  if (conn.firstByteTimer !== undefined) return;
  conn.firstByteTimer = setTimeout(onFirstByteTimeout, conn.firstByteTimeoutMs, conn);
  conn.firstByteTimer.unref();
}

/** Ends the watch (an answer came, or the connection closed); idempotent. */
export function endFirstByteWatch(conn: FirstByteWatched): void {
  conn.watchingFirstByte = false;
  clearTimeout(conn.firstByteTimer);
}

function onFirstByteTimeout(conn: FirstByteWatched): void {
  conn.watchingFirstByte = false;
  try {
    if (conn.bytesToClient === 0 && !conn.upstreamClosed) conn.noAnswer();
  } catch {
    // The owner's verdict threw (a timer callback: it would be uncaught); the connection stays as it is.
  }
}
