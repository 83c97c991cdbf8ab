// The listener hand-over's decisions, pure: the messages on the hand-over socket (parse and
// format), what a starting process does with what the socket answered, what a running one does
// with a request, and whether the socket's directory is fit to trust. The I/O is in
// handover-client.ts (the starting side), handover-server.ts (the running side) and
// handover-addon.ts (sendmsg/recvmsg with SCM_RIGHTS, SO_PEERCRED in native/relay.c).
//
// The exchange, one line each, text, at most MAX_LINE bytes:
//   successor   -> predecessor   kubeward-handover 1 hello
//   predecessor -> successor     kubeward-handover 1 offer ADDR ADDR ...   (one listening fd per ADDR, in order)
//   successor   -> predecessor   kubeward-handover 1 accepting ADDR ...    (the ones it accepts on now)
// ADDR is HOST:PORT as the config names it (IPv6 in brackets). Only after "accepting" does the
// predecessor stop accepting; the sockets are the same kernel sockets throughout, so a connection
// queued on them is accepted by one of the two processes, never dropped.

export const MAX_LINE = 4096;
/** At most this many listeners per offer (native/relay.c's HANDOVER_MAX_FDS). */
export const MAX_LISTENERS = 64;
const PREFIX = 'kubeward-handover 1 ';

export type HandoverMessage = { kind: 'hello' } | { kind: 'offer'; addresses: string[] } | { kind: 'accepting'; addresses: string[] };

/** An address as the hand-over carries it: HOST:PORT, IPv4, name or [IPv6], port 1 to 65535. */
export function isHandoverAddress(text: string): boolean {
  const m = /^(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9.-]{1,253}):(\d{1,5})$/.exec(text);
  if (!m) return false;
  const port = Number(m[2]);
  return port >= 1 && port <= 65535 && String(port) === m[2];
}

export function formatMessage(m: HandoverMessage): string {
  if (m.kind === 'hello') return `${PREFIX}hello\n`;
  return `${PREFIX}${m.kind}${m.addresses.map((a) => ` ${a}`).join('')}\n`;
}

/** One line (without its newline) -> a message, or why it is not one. */
export function parseMessage(line: string): HandoverMessage | { invalid: string } {
  if (line.length > MAX_LINE) return { invalid: `a line of ${line.length} bytes (at most ${MAX_LINE})` };
  if (!line.startsWith(PREFIX)) return { invalid: 'not a kubeward-handover 1 message' };
  const [kind, ...rest] = line.slice(PREFIX.length).split(' ');
  if (kind === 'hello') return rest.length === 0 ? { kind } : { invalid: 'hello takes no arguments' };
  if (kind !== 'offer' && kind !== 'accepting') return { invalid: `unknown message "${String(kind).slice(0, 40)}"` };
  if (rest.length > MAX_LISTENERS) return { invalid: `${rest.length} addresses (at most ${MAX_LISTENERS})` };
  const bad = rest.find((a) => !isHandoverAddress(a));
  if (bad !== undefined) return { invalid: `"${bad.slice(0, 60)}" is not HOST:PORT` };
  if (new Set(rest).size !== rest.length) return { invalid: 'an address is named twice' };
  return { kind, addresses: rest };
}

/** What the starting process learnt from connecting to the socket. */
export type ConnectOutcome = { connected: true; peerUid: number; ownUid: number } | { connected: false; code: string };

export type ConnectVerdict = { ask: true } | { ask: false; why: string; warn: boolean };

/** Ask the predecessor, or bind as usual (and why; warn: something is off, say it at warn level). */
export function decideConnect(o: ConnectOutcome): ConnectVerdict {
  if (!o.connected) {
    if (o.code === 'ENOENT') return { ask: false, why: 'no predecessor (no hand-over socket): first start', warn: false };
    if (o.code === 'ECONNREFUSED') return { ask: false, why: 'no predecessor (nobody listens on the hand-over socket): first start after a stop', warn: false };
    return { ask: false, why: `cannot connect to the hand-over socket (${o.code})`, warn: true };
  }
  if (o.peerUid !== o.ownUid)
    return { ask: false, why: `the hand-over socket is served by uid ${o.peerUid}, not this process's uid ${o.ownUid}: refused`, warn: true };
  return { ask: true };
}

/** The predecessor's answer as received: its text up to the first newline, the descriptors that came with it. */
export type OfferReply = { text: string; fds: number[]; truncated: boolean } | { failed: string };

export type OfferVerdict = { adopt: Map<string, number>; close: number[] } | { adopt: undefined; why: string; close: number[] };

/**
 * Adopt the offered listeners, or none: a malformed answer, a count of descriptors that does not
 * match the addresses, or descriptors the kernel dropped make the whole offer refused (and every
 * descriptor that came closed), so a broken predecessor costs a fresh bind, nothing worse.
 */
export function decideOffer(r: OfferReply): OfferVerdict {
  if ('failed' in r) return { adopt: undefined, why: r.failed, close: [] };
  const refuse = (why: string): OfferVerdict => ({ adopt: undefined, why, close: r.fds });
  if (r.truncated) return refuse('the offer came with more descriptors than fit');
  const m = parseMessage(r.text);
  if ('invalid' in m) return refuse(`the predecessor's answer is not an offer: ${m.invalid}`);
  if (m.kind !== 'offer') return refuse(`the predecessor answered "${m.kind}", not an offer`);
  if (m.addresses.length !== r.fds.length) return refuse(`the offer names ${m.addresses.length} addresses but carries ${r.fds.length} descriptors`);
  return { adopt: new Map(m.addresses.map((a, i) => [a, r.fds[i]!])), close: [] };
}

/** Where the running side's conversation with one successor is. */
export type ServerPhase = 'greeting' | 'offered';

export type RequestVerdict = { action: 'offer' } | { action: 'handed-over'; addresses: string[] } | { action: 'drop'; why: string };

/** The running side, given one line from a peer that passed the uid check. */
export function decideRequest(phase: ServerPhase, line: string): RequestVerdict {
  const m = parseMessage(line);
  if ('invalid' in m) return { action: 'drop', why: m.invalid };
  if (phase === 'greeting' && m.kind === 'hello') return { action: 'offer' };
  if (phase === 'offered' && m.kind === 'accepting') return { action: 'handed-over', addresses: m.addresses };
  return { action: 'drop', why: `"${m.kind}" out of turn` };
}

/** What lstat says about the socket's directory. */
export interface DirFacts {
  isDirectory: boolean;
  isSymbolicLink: boolean;
  uid: number;
  mode: number;
}

/**
 * The directory is the trust boundary: whoever may create a file in it may serve the hand-over
 * socket, and whoever may reach it may ask for the listeners (then SO_PEERCRED checks the uid). So
 * it must be a real directory (not a link someone could point elsewhere), of this process's uid,
 * closed to group and others. Undefined when fit; else the problem in words.
 */
export function judgeHandoverDir(f: DirFacts, ownUid: number): string | undefined {
  if (f.isSymbolicLink) return 'is a symbolic link';
  if (!f.isDirectory) return 'is not a directory';
  if (f.uid !== ownUid) return `belongs to uid ${f.uid}, not to this process's uid ${ownUid}`;
  if ((f.mode & 0o077) !== 0) return `has mode ${(f.mode & 0o777).toString(8).padStart(4, '0')}: group or others have access`;
  return undefined;
}
