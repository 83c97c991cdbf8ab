// Several proxy processes behind the same listen addresses (--workers): the primary keeps `count`
// workers running. Each worker runs its own health checks (see docs/proxy.md: the trade-off);
// operator drains and reloads reach every worker over the IPC channel. Two ways to get connections
// to them (--worker-accept):
// - reuseport (the default): every process listens with SO_REUSEPORT and accepts its own; the
//   kernel picks a socket by a hash of the connection's addresses, whatever each process's load
//   (64 connections split 32/32 to 39/25). Nothing here is in the path of a connection.
// - primary: the primary alone listens and accepts, and hands each new connection to the process
//   with the fewest open connections (pick-process.ts), itself included: the accepted socket goes
//   to the worker over the IPC channel (a descriptor in an SCM_RIGHTS message, Node's
//   `child.send(msg, handle)`). An exact spread, and no worker ever listens, but 20-35 us more CPU
//   per new connection and no lower paced p99 in the measurements, hence not the default.
// Not offered: one listening socket shared by every process. libuv polls without EPOLLEXCLUSIVE,
// every process wakes for every connection and the first to call accept() wins; a burst of 64
// connects split up to 50/15 and 16/49 (docs/design/worker-accept.md).
import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Logger } from '../base/logger.ts';
import type { AcceptedHandle } from './adopt-socket.ts';
import { pickProcess } from './pick-process.ts';

/** What a worker tells the primary. */
export type WorkerReport =
  /** It serves these frontends (after start and after every reload). */
  | { kind: 'kubeward-proxy:ready'; frontends: string[] }
  /** Its open client connections, and how many connections it has received in all. */
  | { kind: 'kubeward-proxy:load'; open: number; received: number };

/** What the primary tells its workers (a connection message carries the accepted socket). */
export type WorkerMessage =
  | { kind: 'kubeward-proxy:reload' }
  | { kind: 'kubeward-proxy:drain'; frontend: string; upstream: string; drained: boolean }
  | { kind: 'kubeward-proxy:connection'; frontend: string };

export interface WorkerPoolOptions {
  /** Workers besides the primary; 0 starts none. */
  count: number;
  /** Entry script, its arguments and Node's own flags for a worker. */
  script: string;
  args: readonly string[];
  execArgv?: readonly string[];
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** A worker that exits by itself is started again after this long; default 1 s. */
  restartDelayMs?: number;
}

interface Worker {
  child: ChildProcess;
  slot: number;
  /** The frontends it serves; undefined until it reported ready. */
  frontends: Set<string> | undefined;
  /** Its last report: open connections then, and connections received by then. */
  open: number;
  received: number;
  /** Connections handed to it so far. */
  sent: number;
  /** Accepted sockets on their way to it: closed here if it exits before Node has written them. */
  inFlight: Set<AcceptedHandle>;
}

export class WorkerPool {
  readonly #opts: WorkerPoolOptions;
  readonly #workers = new Set<Worker>();
  #closing = false;
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor(opts: WorkerPoolOptions) {
    this.#opts = opts;
    for (let i = 0; i < opts.count; i++) this.#spawn(i);
  }

  /** How many workers are not ready yet (starting, or restarting after an exit). */
  get starting(): number {
    let ready = 0;
    for (const w of this.#workers) if (w.frontends) ready++;
    return this.#opts.count - ready;
  }

  get pids(): number[] {
    return [...this.#workers].map((w) => w.child.pid!).filter((p) => p !== undefined);
  }

  broadcast(msg: WorkerMessage): void {
    for (const w of this.#workers) if (w.child.connected) w.child.send(msg);
  }

  /**
   * Offers an accepted connection: true when a worker with fewer open connections than the primary
   * (`primaryOpen`) serves this frontend and the connection was sent to it. The primary's copy is
   * closed once Node has written it to the channel; if that fails, `keep` gets the connection back.
   */
  handOff(frontend: string, client: AcceptedHandle, primaryOpen: number, keep: (client: AcceptedHandle) => void): boolean {
    const eligible: Worker[] = [];
    const load: number[] = [];
    for (const w of this.#workers) {
      if (!w.frontends?.has(frontend) || !w.child.connected) continue;
      eligible.push(w);
      load.push(w.open + w.sent - w.received);
    }
    const i = pickProcess(primaryOpen, load);
    if (i < 0) return false;
    const w = eligible[i]!;
    w.sent++;
    w.inFlight.add(client);
    const msg: WorkerMessage = { kind: 'kubeward-proxy:connection', frontend };
    // A raw TCP handle is sent as Node's 'net.Native' type: the worker gets the handle itself,
    // nothing read from it (lib/internal/child_process.js, handleConversion).
    try {
      w.child.send(msg, client as unknown as Socket, (err) => {
        if (!w.inFlight.delete(client)) return; // the worker exited first: already closed
        if (err) {
          w.sent--;
          keep(client);
        } else client.close();
      });
    } catch {
      // Not sent (the channel went away under us): the primary serves it.
      w.inFlight.delete(client);
      w.sent--;
      return false;
    }
    return true;
  }

  /** SIGTERM to every worker (each closes gracefully with its own shutdownGrace); waits for all to exit. */
  async close(): Promise<void> {
    this.#closing = true;
    for (const t of this.#timers) clearTimeout(t);
    await Promise.all(
      [...this.#workers].map(
        ({ child: w }) =>
          new Promise<void>((resolve) => {
            if (w.exitCode !== null || w.signalCode !== null) return resolve();
            w.once('exit', () => resolve());
            w.kill('SIGTERM');
          }),
      ),
    );
  }

  #spawn(slot: number): void {
    const { script, args, execArgv, env, log } = this.#opts;
    const child = fork(script, [...args], { env, execArgv: execArgv ? [...execArgv] : undefined, stdio: 'inherit' });
    const w: Worker = { child, slot, frontends: undefined, open: 0, received: 0, sent: 0, inFlight: new Set() };
    this.#workers.add(w);
    child.on('error', (err) => log.error({ worker: slot, err: err.message }, 'proxy worker error'));
    child.on('message', (m: WorkerReport) => {
      if (m?.kind === 'kubeward-proxy:ready' && Array.isArray(m.frontends)) w.frontends = new Set(m.frontends);
      else if (m?.kind === 'kubeward-proxy:load' && Number.isSafeInteger(m.open) && Number.isSafeInteger(m.received)) {
        w.open = m.open;
        w.received = m.received;
      }
    });
    child.once('exit', (code, signal) => {
      this.#workers.delete(w);
      // Connections Node had not written to the channel yet: the clients see a close, not a hang.
      for (const c of w.inFlight) c.close();
      w.inFlight.clear();
      if (this.#closing) return;
      log.error({ worker: slot, pid: child.pid, code, signal }, 'proxy worker exited; starting another');
      const t = setTimeout(() => {
        this.#timers.delete(t);
        if (!this.#closing) this.#spawn(slot);
      }, this.#opts.restartDelayMs ?? 1000);
      this.#timers.add(t);
    });
  }
}

/** What a worker does with the primary's messages. */
export interface PrimaryHandlers {
  reload: () => void;
  drain: (frontend: string, upstream: string, drained: boolean) => void;
  /** A connection the primary accepted for this frontend; false when this process has no such frontend (it closed it). */
  connection: (frontend: string, client: AcceptedHandle) => boolean;
  /** This process's open client connections, for its load reports. */
  open: () => number;
  /** The frontends it serves now. */
  frontends: () => string[];
}

export interface FollowingPrimary {
  /** Tells the primary the frontends served now (after start and after every reload): it hands over connections for those. */
  ready(): void;
  /**
   * A connection of this process ended: the primary hears the new count at the end of this
   * event-loop turn (one message for all the ends of a turn). Only ends are reported: the primary
   * counts the connections it sends itself. Gathering them for 10 ms instead left back-to-back wrk
   * runs split up to 47/17: the primary counted the previous run's connections as still open.
   */
  closed(): void;
  /** The undo: stop obeying the primary. */
  stop(): void;
}

/**
 * The worker's side: obeys the primary's messages, reports its load, and shuts down (SIGTERM to
 * itself, so the usual graceful steps run) when the primary is gone.
 */
export function followPrimary(handlers: PrimaryHandlers, proc: NodeJS.Process = process): FollowingPrimary {
  let received = 0;
  let reportQueued: NodeJS.Immediate | undefined;
  const report = (): void => {
    reportQueued = undefined;
    if (proc.connected) proc.send?.({ kind: 'kubeward-proxy:load', open: handlers.open(), received } satisfies WorkerReport);
  };
  const queueReport = (): void => {
    reportQueued ??= setImmediate(report);
  };
  const onMessage = (raw: unknown, handle: unknown): void => {
    const msg = raw as WorkerMessage;
    if (msg?.kind === 'kubeward-proxy:connection') {
      const client = handle as AcceptedHandle | undefined;
      if (!client || typeof client.close !== 'function') return;
      received++;
      // Closed at once when no frontend here has that name: reported as an end.
      if (!handlers.connection(msg.frontend, client)) queueReport();
    } else if (msg?.kind === 'kubeward-proxy:reload') handlers.reload();
    else if (msg?.kind === 'kubeward-proxy:drain') handlers.drain(msg.frontend, msg.upstream, msg.drained);
  };
  const onDisconnect = (): void => void proc.kill(proc.pid, 'SIGTERM');
  proc.on('message', onMessage);
  proc.once('disconnect', onDisconnect);
  return {
    ready: () => {
      if (proc.connected) proc.send?.({ kind: 'kubeward-proxy:ready', frontends: handlers.frontends() } satisfies WorkerReport);
    },
    closed: queueReport,
    stop: () => {
      clearImmediate(reportQueued);
      proc.off('message', onMessage);
      proc.off('disconnect', onDisconnect);
    },
  };
}
