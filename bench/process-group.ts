// Every process the benchmark starts, kept by pid so that all of them (and their children) are
// stopped at the end, on error and on SIGINT. Each runs with NOFILE open files allowed and the
// environment the shipped units give a daemon (daemon-env.ts), not the bench's own.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { shippedDaemonEnv } from './daemon-env.ts';
import { NOFILE } from './peer-configs.ts';
import { processTree } from './proc-stats.ts';

export interface Running {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** The last few KB of stderr, for error messages. */
  stderrTail(): string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
}

/** --daemon-stdout DIR: made if missing; the absolute path, or why it cannot hold the output. */
export function daemonStdoutDir(dir: string): { dir: string } | { why: string } {
  if (dir === '') return { why: 'expected a directory' };
  try {
    const abs = resolve(dir);
    mkdirSync(abs, { recursive: true });
    return { dir: abs };
  } catch (err) {
    return { why: `cannot make it (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
}

export class ProcessGroup {
  readonly #running = new Map<number, Running>();
  readonly #env: Record<string, string>;
  readonly #stdoutDir: string | undefined;
  #started = 0;

  /** stdoutDir: keep each process's standard output there (NAME.N.out) instead of discarding it (V8's --trace-gc writes there). */
  constructor(env: Record<string, string> = shippedDaemonEnv(process.env), opts: { stdoutDir?: string } = {}) {
    this.#env = env;
    this.#stdoutDir = opts.stdoutDir;
  }

  /** Starts cmd through `sh -c 'ulimit -n NOFILE; exec ...'`, so the pid is cmd's own. */
  start(name: string, cmd: string, args: readonly string[], opts: { cwd?: string; stdout?: 'ignore' | 'pipe' } = {}): Running {
    const n = ++this.#started;
    const keptFd = opts.stdout !== 'pipe' && this.#stdoutDir !== undefined ? openSync(join(this.#stdoutDir, `${name}.${n}.out`), 'w') : undefined;
    let child: ChildProcess;
    try {
      child = spawn('sh', ['-c', `ulimit -n ${NOFILE} && exec "$0" "$@"`, cmd, ...args], {
        cwd: opts.cwd,
        env: this.#env,
        stdio: ['ignore', keptFd ?? opts.stdout ?? 'ignore', 'pipe'],
      });
    } finally {
      if (keptFd !== undefined) closeSync(keptFd); // the child has its own copy
    }
    if (child.pid === undefined) throw new Error(`could not start ${name} (${cmd})`);
    let tail = '';
    child.stderr?.setEncoding('utf8').on('data', (s: string) => {
      tail = (tail + s).slice(-4096);
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const running: Running = { name, pid: child.pid, child, stderrTail: () => tail, exited };
    this.#running.set(child.pid, running);
    void exited.then(() => this.#running.delete(running.pid));
    return running;
  }

  /** SIGCONT (it may be stopped), SIGTERM, and SIGKILL after graceMs; leftover children are killed by pid too. */
  async stop(r: Running, graceMs = 3000): Promise<void> {
    const tree = processTree(r.pid);
    if (this.#running.has(r.pid)) {
      signal(r.pid, 'SIGCONT');
      signal(r.pid, 'SIGTERM');
      const timer = setTimeout(() => signal(r.pid, 'SIGKILL'), graceMs);
      await r.exited;
      clearTimeout(timer);
    }
    for (const pid of tree) if (pid !== r.pid) signal(pid, 'SIGKILL');
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.#running.values()].map((r) => this.stop(r)));
  }

  /** Synchronous last resort (process exit handlers cannot wait). */
  killAllNow(): void {
    for (const r of this.#running.values()) {
      for (const pid of processTree(r.pid)) signal(pid, 'SIGKILL');
    }
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}
