// A static pod's preStop hook for the listener hand-over: waits until the listening sockets on the
// given addresses are held by another process only (the replacing pod), so that the old pod gets
// its SIGTERM only once its successor accepts. kubelet 1.20 starts a changed static pod while the
// old one is still terminating; without this wait the SIGTERM would come while the successor is
// still starting. It never fails the hook: after --timeout it exits 0 and the old pod shuts down
// as before.
//   node await-successor.ts 127.0.0.1:6443 [[::1]:6443 ...] [--timeout 20s] [--interval 100ms]
// "Held by another process only": a LISTEN socket on the address whose inode no process of this
// container holds (the hook runs in the old container's PID namespace; /proc/net is the pod's
// network namespace, the node's for hostNetwork pods). With --handover-socket the successor holds
// the very socket the old process held (same inode, passed with SCM_RIGHTS), and the old process
// closes its descriptor only after the successor said it accepts: the condition turns true exactly
// when the hand-over is complete, and not while both hold it. With --reuse-port the successor's
// socket is a second one, which counts as soon as it listens. Self-contained: node: modules and
// one sibling only.
import { readFile, readdir, readlink } from 'node:fs/promises';
import { isIP } from 'node:net';
import { canonicalHost, parseProcNetTcp, type ListeningSocket } from './proc-net-tcp.ts';

export interface Target {
  host: string;
  port: number;
}

export function parseTarget(text: string): Target | undefined {
  const bracketed = /^\[([^\]]+)\]:(\d{1,5})$/.exec(text);
  const m = bracketed ?? /^([^:[\]]+):(\d{1,5})$/.exec(text);
  if (!m || isIP(m[1]!) !== (bracketed ? 6 : 4)) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: canonicalHost(m[1]!), port };
}

export function parseSeconds(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(text);
  if (!m) return undefined;
  return m[2] === 'ms' ? Number(m[1]) / 1000 : Number(m[1]);
}

/** The targets that have no listener outside `own` yet (pure). */
export function targetsWithoutSuccessor(targets: readonly Target[], listening: readonly ListeningSocket[], own: ReadonlySet<number>): Target[] {
  return targets.filter((t) => !listening.some((l) => l.host === t.host && l.port === t.port && l.inode !== 0 && !own.has(l.inode)));
}

async function ownSocketInodes(): Promise<Set<number>> {
  const own = new Set<number>();
  for (const pid of (await readdir('/proc')).filter((d) => /^\d+$/.test(d))) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m) own.add(Number(m[1]));
    }
  }
  return own;
}

async function listeningSockets(): Promise<ListeningSocket[]> {
  const v4 = await readFile('/proc/net/tcp', 'utf8').catch(() => '');
  const v6 = await readFile('/proc/net/tcp6', 'utf8').catch(() => '');
  return [...parseProcNetTcp(v4, 4), ...parseProcNetTcp(v6, 6)];
}

function usage(problem: string): never {
  process.stderr.write(`await-successor: ${problem}; usage: await-successor.ts HOST:PORT... [--timeout 20s] [--interval 100ms]\n`);
  process.exit(2);
}

async function main(argv: string[]): Promise<void> {
  const targets: Target[] = [];
  let timeout = 20;
  let interval = 0.1;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--timeout' || a === '--interval') {
      const v = parseSeconds(argv[++i] ?? '');
      if (v === undefined || v > 3600) usage(`${a} needs a duration like 20s or 500ms`);
      if (a === '--timeout') timeout = v;
      else interval = Math.max(v, 0.01);
      continue;
    }
    const t = parseTarget(a);
    if (!t) usage(`${a} is not HOST:PORT (IPv6 in brackets)`);
    targets.push(t);
  }
  if (targets.length === 0) usage('no address given');
  const started = Date.now();
  let waiting = targets;
  while (Date.now() - started < timeout * 1000) {
    waiting = targetsWithoutSuccessor(targets, await listeningSockets(), await ownSocketInodes());
    if (waiting.length === 0) {
      process.stdout.write(`await-successor: a successor listens on every address after ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
      return;
    }
    await new Promise((r) => setTimeout(r, interval * 1000));
  }
  const names = waiting.map((t) => (t.host.includes(':') ? `[${t.host}]:${t.port}` : `${t.host}:${t.port}`)).join(', ');
  process.stdout.write(`await-successor: no successor on ${names} after ${timeout}s; stopping anyway\n`);
}

if (import.meta.main) await main(process.argv.slice(2));
