// Several proxy processes on the same listen addresses: the primary serves like any worker and
// keeps `count` more running, each started with the same arguments and SO_REUSEPORT, so the kernel
// spreads new connections between them. Each worker runs its own health checks (see README: the
// trade-off); operator drains and reloads reach every worker over the IPC channel.
import { fork, type ChildProcess } from 'node:child_process';
import type { Logger } from '../base/logger.ts';

/** What a worker tells the primary: it listens on every address (sent once, after start). */
export interface WorkerReport {
  kind: 'kubeward-proxy:listening';
}

/** What the primary tells its workers. */
export type WorkerMessage = { kind: 'kubeward-proxy:reload' } | { kind: 'kubeward-proxy:drain'; frontend: string; upstream: string; drained: boolean };

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

export class WorkerPool {
  readonly #opts: WorkerPoolOptions;
  readonly #workers = new Set<ChildProcess>();
  readonly #listening = new Set<ChildProcess>();
  #closing = false;
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor(opts: WorkerPoolOptions) {
    this.#opts = opts;
    for (let i = 0; i < opts.count; i++) this.#spawn(i);
  }

  /** How many workers are not listening yet (starting, or restarting after an exit). */
  get starting(): number {
    return this.#opts.count - this.#listening.size;
  }

  get pids(): number[] {
    return [...this.#workers].map((w) => w.pid!).filter((p) => p !== undefined);
  }

  broadcast(msg: WorkerMessage): void {
    for (const w of this.#workers) if (w.connected) w.send(msg);
  }

  /** SIGTERM to every worker (each closes gracefully with its own shutdownGrace); waits for all to exit. */
  async close(): Promise<void> {
    this.#closing = true;
    for (const t of this.#timers) clearTimeout(t);
    await Promise.all(
      [...this.#workers].map(
        (w) =>
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
    const w = fork(script, [...args], { env, execArgv: execArgv ? [...execArgv] : undefined, stdio: 'inherit' });
    this.#workers.add(w);
    w.on('error', (err) => log.error({ worker: slot, err: err.message }, 'proxy worker error'));
    w.on('message', (m: WorkerReport) => {
      if (m?.kind === 'kubeward-proxy:listening') this.#listening.add(w);
    });
    w.once('exit', (code, signal) => {
      this.#workers.delete(w);
      this.#listening.delete(w);
      if (this.#closing) return;
      log.error({ worker: slot, pid: w.pid, code, signal }, 'proxy worker exited; starting another');
      const t = setTimeout(() => {
        this.#timers.delete(t);
        if (!this.#closing) this.#spawn(slot);
      }, this.#opts.restartDelayMs ?? 1000);
      this.#timers.add(t);
    });
  }
}

/**
 * The worker's side: obeys the primary's messages, and shuts down (SIGTERM to itself, so the usual
 * graceful steps run) when the primary is gone. Returns the undo.
 */
export function followPrimary(
  handlers: { reload: () => void; drain: (frontend: string, upstream: string, drained: boolean) => void },
  proc: NodeJS.Process = process,
): () => void {
  const onMessage = (raw: unknown): void => {
    const msg = raw as WorkerMessage;
    if (msg?.kind === 'kubeward-proxy:reload') handlers.reload();
    else if (msg?.kind === 'kubeward-proxy:drain') handlers.drain(msg.frontend, msg.upstream, msg.drained);
  };
  const onDisconnect = (): void => void proc.kill(proc.pid, 'SIGTERM');
  proc.on('message', onMessage);
  proc.once('disconnect', onDisconnect);
  proc.send?.({ kind: 'kubeward-proxy:listening' } satisfies WorkerReport);
  return () => {
    proc.off('message', onMessage);
    proc.off('disconnect', onDisconnect);
  };
}
