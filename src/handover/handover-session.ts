// The listener hand-over as one process sees it (--handover-socket PATH). At start it asks the
// process serving PATH (its predecessor) for the listening sockets and keeps what it got; the
// listeners it opens take theirs from here (listen-on.ts) and are recorded here in turn; once they
// all accept, accepting() tells the predecessor, which only then stops accepting. From then on this
// process serves PATH itself (handover-server.ts) for its own successor.
// Every step is bounded (connect does not wait, the answer within answerTimeoutMs) and anything a
// peer gets wrong ends in a plain bind, logged: a hand-over can fail, a start cannot because of it.
import { chmod, lstat, mkdir } from 'node:fs/promises';
import type { Server } from 'node:net';
import { dirname } from 'node:path';
import { describeError } from '../base/errors.ts';
import type { Logger } from '../base/logger.ts';
import { decideConnect, decideOffer, formatMessage, judgeHandoverDir, MAX_LINE, type OfferReply } from './decide-handover.ts';
import { errnoName, type HandoverAddon } from './handover-addon.ts';

/** What a listener opener (ListenerSet, the admin and metrics listeners) needs from the hand-over. */
export interface ListenerHandover {
  /** The predecessor's listening socket for this address, once; undefined: bind it. */
  take(key: string): number | undefined;
  /** The taken socket listens here now (verified): name it in "accepting". */
  adopted(key: string): void;
  /** This server listens on key: a successor gets it. */
  offer(key: string, server: Server): void;
  /** The server stopped listening on key (a reload removed the address, shutdown). */
  withdraw(key: string, server: Server): void;
}

export interface HandoverSessionOptions {
  path: string;
  addon: HandoverAddon | { unusable: string };
  log: Logger;
  /** How long the predecessor has to answer "hello" (the start waits at most this long). */
  answerTimeoutMs?: number;
  uid?: number;
}

export class HandoverSession implements ListenerHandover {
  readonly path: string;
  readonly addon: HandoverAddon | undefined;
  readonly #log: Logger;
  /** Sockets the predecessor offered and nothing took yet. */
  readonly #inherited: Map<string, number>;
  readonly #adopted = new Set<string>();
  readonly #offered = new Map<string, Server>();
  /** The connection to the predecessor until "accepting" is sent. */
  #peer: number | undefined;
  #accepted = false;
  #handedOver = false;

  private constructor(path: string, addon: HandoverAddon | undefined, log: Logger, inherited: Map<string, number>, peer: number | undefined) {
    this.path = path;
    this.addon = addon;
    this.#log = log;
    this.#inherited = inherited;
    this.#peer = peer;
  }

  /**
   * Checks the socket's directory (creates it 0700 if missing), then asks a predecessor for its
   * listeners. Never fails: what goes wrong turns the hand-over off, logged.
   */
  static async start(o: HandoverSessionOptions): Promise<HandoverSession> {
    const uid = o.uid ?? process.getuid?.() ?? 0;
    // An unfit directory turns the hand-over off, loudly, and the process starts as without it: the
    // proxy is the node's path to the API, and a start refused over the upgrade path would turn a
    // degraded upgrade into an outage. An untrusted directory is never used.
    const problem = await directoryProblem(o.path, uid);
    const off = problem ?? ('unusable' in o.addon ? o.addon.unusable : undefined);
    if (off !== undefined || 'unusable' in o.addon) {
      o.log.warn({ handoverSocket: o.path, why: off }, 'listener hand-over off: binding as usual, and a successor cannot take over without a gap');
      return new HandoverSession(o.path, undefined, o.log, new Map(), undefined);
    }
    const addon = o.addon;
    let asked: ReturnType<typeof ask>;
    try {
      asked = ask(addon, o.path, uid, o.answerTimeoutMs ?? 3000, o.log);
    } catch (err) {
      o.log.warn({ handoverSocket: o.path, err: describeError(err) }, 'no hand-over: binding the listen addresses');
      asked = { inherited: new Map(), peer: undefined };
    }
    const { inherited, peer } = asked;
    if (inherited.size > 0) o.log.info({ handoverSocket: o.path, listeners: [...inherited.keys()] }, 'received the listening sockets of the running process');
    return new HandoverSession(o.path, addon, o.log, inherited, peer);
  }

  /** The successor took over (its "accepting" arrived): this process no longer accepts. */
  get handedOver(): boolean {
    return this.#handedOver;
  }

  take(key: string): number | undefined {
    const fd = this.#inherited.get(key);
    this.#inherited.delete(key);
    return fd;
  }

  adopted(key: string): void {
    this.#adopted.add(key);
  }

  offer(key: string, server: Server): void {
    this.#offered.set(key, server);
  }

  withdraw(key: string, server: Server): void {
    if (this.#offered.get(key) === server) this.#offered.delete(key);
  }

  /** Listening descriptors to offer a successor, by address. */
  listenerFds(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [key, server] of this.#offered) {
      const fd = (server as unknown as { _handle?: { fd?: unknown } | null })._handle?.fd;
      if (server.listening && typeof fd === 'number' && fd >= 0) out.set(key, fd);
    }
    return out;
  }

  /**
   * Every listener accepts: tells the predecessor (which stops accepting on hearing it) and closes
   * what was offered but not taken. Idempotent; never throws.
   */
  accepting(): void {
    if (this.#accepted) return;
    this.#accepted = true;
    for (const fd of this.#inherited.values()) this.addon?.handoverClose(fd);
    if (this.#inherited.size > 0)
      this.#log.info({ listeners: [...this.#inherited.keys()] }, 'offered listening sockets this config does not name: closed here');
    this.#inherited.clear();
    const peer = this.#peer;
    this.#peer = undefined;
    if (peer === undefined || !this.addon) return;
    const text = Buffer.from(formatMessage({ kind: 'accepting', addresses: [...this.#adopted] }));
    const sent = this.addon.handoverSend(peer, text, []);
    this.addon.handoverClose(peer);
    if (sent === text.length)
      this.#log.info({ listeners: [...this.#adopted] }, 'accepting on the handed-over sockets; the previous process stops accepting now');
    else
      this.#log.warn(
        { why: sent < 0 ? errnoName(sent) : `${sent} of ${text.length} bytes` },
        'could not tell the previous process that this one accepts; both accept until it stops',
      );
  }

  /** The successor accepts: stop accepting on every offered listener (they stay open in the successor). */
  stopAccepting(): void {
    this.#handedOver = true;
    for (const server of this.#offered.values()) server.close();
    this.#offered.clear();
  }
}

/** Creates the socket's directory (0700) if missing; the reason it is unfit, or undefined. */
async function directoryProblem(path: string, uid: number): Promise<string | undefined> {
  const dir = dirname(path);
  const fix = `install -d -o ${uid} -m 0700 ${dir}, or point --handover-socket into such a directory`;
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return `cannot create ${dir} (${describeError(err)}); ${fix}`;
  }
  try {
    let st = await lstat(dir);
    // A directory of this uid that others may enter (a hostPath kubelet created, 0755) is narrowed
    // to 0700: only tightening, and only of what is this process's own already.
    if (st.isDirectory() && !st.isSymbolicLink() && st.uid === uid && (st.mode & 0o077) !== 0) {
      await chmod(dir, 0o700);
      st = await lstat(dir);
    }
    const problem = judgeHandoverDir({ isDirectory: st.isDirectory(), isSymbolicLink: st.isSymbolicLink(), uid: st.uid, mode: st.mode }, uid);
    return problem === undefined ? undefined : `the directory ${dir} ${problem}; ${fix}`;
  } catch (err) {
    return `cannot inspect ${dir} (${describeError(err)}); ${fix}`;
  }
}

/** The conversation up to the offer; the connection stays open for "accepting". */
function ask(addon: HandoverAddon, path: string, uid: number, timeoutMs: number, log: Logger): { inherited: Map<string, number>; peer: number | undefined } {
  const none = { inherited: new Map<string, number>(), peer: undefined };
  const fd = addon.handoverConnect(path);
  if (fd < 0) {
    const v = decideConnect({ connected: false, code: errnoName(fd) });
    if (!v.ask) log[v.warn ? 'warn' : 'info']({ handoverSocket: path, why: v.why }, 'binding the listen addresses');
    return none;
  }
  const give = (why: string, fds: number[] = []): typeof none => {
    for (const f of fds) addon.handoverClose(f);
    addon.handoverClose(fd);
    log.warn({ handoverSocket: path, why }, 'no hand-over: binding the listen addresses');
    return none;
  };
  const cred = addon.handoverPeer(fd);
  if (typeof cred === 'number') return give(`SO_PEERCRED failed (${errnoName(cred)})`);
  const v = decideConnect({ connected: true, peerUid: cred[1], ownUid: uid });
  if (!v.ask) return give(v.why);
  const hello = Buffer.from(formatMessage({ kind: 'hello' }));
  const sent = addon.handoverSend(fd, hello, []);
  if (sent !== hello.length) return give(`sending hello failed (${sent < 0 ? errnoName(sent) : 'short write'})`);
  const reply = receiveLine(addon, fd, timeoutMs);
  if ('failed' in reply) return give(reply.failed, reply.fds);
  const verdict = decideOffer(reply);
  if (verdict.adopt === undefined) return give(verdict.why, verdict.close);
  return { inherited: verdict.adopt, peer: fd };
}

/** Reads up to the first newline (at most MAX_LINE bytes, within timeoutMs), with every descriptor that came. */
function receiveLine(addon: HandoverAddon, fd: number, timeoutMs: number): Extract<OfferReply, { text: string }> | { failed: string; fds: number[] } {
  const deadline = Date.now() + timeoutMs;
  const chunks: Buffer[] = [];
  const fds: number[] = [];
  let truncated = false;
  let bytes = 0;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return { failed: `no answer within ${timeoutMs} ms`, fds };
    const r = addon.handoverReceive(fd, MAX_LINE + 1 - bytes, Math.min(left, 60_000));
    if (typeof r === 'number') return { failed: errnoName(r) === 'ETIMEDOUT' ? `no answer within ${timeoutMs} ms` : `receiving failed (${errnoName(r)})`, fds };
    const [data, got, cut] = r;
    fds.push(...got);
    truncated ||= cut;
    if (data.length === 0) return { failed: 'the running process closed the hand-over socket without an offer', fds };
    chunks.push(data);
    bytes += data.length;
    const all = Buffer.concat(chunks);
    const nl = all.indexOf(0x0a);
    if (nl >= 0) return { text: all.subarray(0, nl).toString('utf8'), fds, truncated };
    if (bytes > MAX_LINE) return { failed: `an answer of more than ${MAX_LINE} bytes without a line end`, fds };
  }
}
