// The running side of the listener hand-over: serves --handover-socket PATH for a successor. The
// socket is bound under a temporary name, made 0600 and renamed onto PATH, so it replaces the
// predecessor's socket in one step (a successor never finds PATH missing while one of the two runs).
// A peer of another uid, one that says anything out of turn, sends
// more than a line or goes quiet is dropped and this process goes on accepting: only a successor's
// "accepting" makes it stop (onHandedOver).
import { chmod, rename, rm } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { describeError } from '../base/errors.ts';
import type { Logger } from '../base/logger.ts';
import { decideRequest, formatMessage, MAX_LINE, type ServerPhase } from './decide-handover.ts';
import { errnoName } from './handover-addon.ts';
import type { HandoverSession } from './handover-session.ts';

export interface HandoverServerOptions {
  session: HandoverSession;
  log: Logger;
  /** The successor accepts on the sockets: stop accepting, and go. */
  onHandedOver: (addresses: string[]) => void;
  /** A peer must say hello within this (default 5 s). */
  helloTimeoutMs?: number;
  /** A successor that got the offer must accept within this (default 60 s: its start may be slow); else this process keeps them. */
  acceptTimeoutMs?: number;
  uid?: number;
}

export interface HandoverServer {
  close(): Promise<void>;
}

/** Serves the hand-over socket; undefined (logged) when it cannot (no addon, bind or rename failed). */
export async function serveHandover(o: HandoverServerOptions): Promise<HandoverServer | undefined> {
  const { session, log } = o;
  const addon = session.addon;
  if (!addon) return undefined;
  const uid = o.uid ?? process.getuid?.() ?? 0;
  const tmp = `${session.path}.${process.pid}.new`;
  let done = false;
  /** Conversations under way: each gets an offer, the first "accepting" wins, the rest are dropped. */
  const talking = new Set<Socket>();
  const server = createServer({ allowHalfOpen: false });
  server.maxConnections = 16;
  server.on('error', (err) => log.warn({ err: describeError(err) }, 'hand-over socket error'));
  server.on('connection', (socket: Socket) => {
    socket.on('error', () => undefined);
    const fd = (socket as unknown as { _handle?: { fd?: unknown } | null })._handle?.fd;
    const cred = typeof fd === 'number' && fd >= 0 ? addon.handoverPeer(fd) : -9;
    if (typeof cred === 'number' || cred[1] !== uid) {
      log.warn(
        { peer: typeof cred === 'number' ? errnoName(cred) : { pid: cred[0], uid: cred[1] } },
        'hand-over socket: a peer of another uid (or unknown): dropped',
      );
      socket.destroy();
      return;
    }
    if (done) {
      socket.destroy();
      return;
    }
    // Not one at a time: a peer that says hello and then nothing must not hold a real successor off.
    talking.add(socket);
    let phase: ServerPhase = 'greeting';
    let buffered = '';
    const drop = (why: string): void => {
      log.warn({ peerPid: cred[0], why }, 'hand-over socket: peer dropped; this process keeps accepting');
      socket.destroy();
    };
    socket.setTimeout(o.helloTimeoutMs ?? 5000, () => drop(phase === 'greeting' ? 'no hello in time' : 'no "accepting" in time'));
    socket.once('close', () => {
      talking.delete(socket);
      if (phase === 'offered' && !done) log.warn({ peerPid: cred[0] }, 'the successor went away before it accepted; this process keeps accepting');
    });
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      // Nothing a peer sends may throw out of this handler: an uncaught exception would stop the daemon.
      try {
        onData(chunk);
      } catch (err) {
        drop(`handling its message failed: ${describeError(err)}`);
      }
    });
    const onData = (chunk: string): void => {
      if (socket.destroyed) return;
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl >= 0 && !socket.destroyed; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const v = decideRequest(phase, line);
        if (v.action === 'drop') return drop(v.why);
        if (v.action === 'offer') {
          const fds = session.listenerFds();
          const text = Buffer.from(formatMessage({ kind: 'offer', addresses: [...fds.keys()] }));
          const sent = addon.handoverSend(fd as number, text, [...fds.values()]);
          if (sent !== text.length) return drop(`sending the offer failed (${sent < 0 ? errnoName(sent) : 'short write'})`);
          phase = 'offered';
          socket.setTimeout(o.acceptTimeoutMs ?? 60_000);
          log.info({ peerPid: cred[0], listeners: [...fds.keys()] }, 'offered the listening sockets to a successor');
          continue;
        }
        done = true;
        for (const other of talking) if (other !== socket) other.destroy();
        socket.end();
        void close();
        log.info({ peerPid: cred[0], accepting: v.addresses }, 'the successor accepts on the handed-over sockets: this process stops accepting');
        o.onHandedOver(v.addresses);
        return;
      }
      if (buffered.length > MAX_LINE) drop(`more than ${MAX_LINE} bytes without a line end`);
    };
  });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= new Promise<void>((resolve) => server.close(() => resolve())));
  try {
    await rm(tmp, { force: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ path: tmp, backlog: 16 }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    await chmod(tmp, 0o600);
    await rename(tmp, session.path);
  } catch (err) {
    log.warn(
      { handoverSocket: session.path, err: describeError(err) },
      'cannot serve the hand-over socket: a successor will bind (and wait for this process to go)',
    );
    await close();
    await rm(tmp, { force: true }).catch(() => undefined);
    return undefined;
  }
  log.info({ handoverSocket: session.path }, 'serving the listener hand-over');
  return { close };
}
