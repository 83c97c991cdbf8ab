// Runs the real kubeward CLI as a child process for tests: JSON logs collected from stderr, stdout
// kept, a bounded wait for a log line, and a kill by PID that tests call in their after hooks.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait-for.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Node 24 from node_modules (the machine's node may be older). */
export const NODE = process.execPath;

/**
 * What the process-level tests run: the TypeScript sources (default), or with KUBEWARD_BIN=dist the
 * production build through the installed entry point (bin/kubeward.js runs dist/ with the shipped
 * V8 settings), so that what ships is what is tested. The one place tests learn how to start kubeward.
 */
export const KUBEWARD_BIN = process.env.KUBEWARD_BIN === 'dist' ? 'dist' : 'src';
export const MAIN = KUBEWARD_BIN === 'dist' ? `${ROOT}bin/kubeward.js` : `${ROOT}src/cli/main.ts`;
if (KUBEWARD_BIN === 'dist' && !existsSync(`${ROOT}dist/main.js`)) {
  throw new Error('KUBEWARD_BIN=dist: dist/main.js is missing; run "npm run build" first');
}

/** The command line that runs kubeward with args: [node, ...nodeArgs, entry, ...args]. */
export function kubewardArgv(args: readonly string[], nodeArgs: readonly string[] = []): string[] {
  return [NODE, ...nodeArgs, MAIN, ...args];
}

/**
 * The test process's environment without OS_* variables. The OpenStack client lets OS_* override a
 * clouds.yaml entry (as the openstack CLI does), so a child pointed at the emulator must not see the
 * real cloud's variables that CI exports for the contract suite.
 */
export function envWithoutOpenStack(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OS_')));
  return { ...env, ...extra };
}

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export class KubewardProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly logs: LogLine[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  /** prefix: a command in front of node (prlimit ...); nodeArgs: node's own options (--import ...). */
  constructor(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; prefix?: string[]; nodeArgs?: string[] } = {}) {
    const argv = [...(opts.prefix ?? []), ...kubewardArgv(args, opts.nodeArgs)];
    this.child = spawn(argv[0]!, argv.slice(1), { cwd: opts.cwd ?? ROOT, env: opts.env ?? envWithoutOpenStack(), stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (d: string) => (this.stdout += d));
    let partial = '';
    this.child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      this.stderr += d;
      partial += d;
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const l of lines) {
        try {
          this.logs.push(JSON.parse(l) as LogLine);
        } catch {
          // not a log line (usage errors are plain text)
        }
      }
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Waits for a log line whose msg matches (and optional field check). */
  waitForLog(msg: RegExp, opts: { timeoutMs?: number; where?: (l: LogLine) => boolean } = {}): Promise<LogLine> {
    return waitFor(() => this.logs.find((l) => msg.test(l.msg) && (opts.where?.(l) ?? true)), {
      timeoutMs: opts.timeoutMs ?? 15_000,
      what: `log line ${msg}; stderr so far: ${this.stderr.slice(-600)}`,
    });
  }

  /**
   * The admin listener's port, read from its "admin listener ready" line: give the child port 0
   * and ask it, so no other process can take a port between a test choosing it and the child binding it.
   */
  async adminPort(opts: { timeoutMs?: number } = {}): Promise<number> {
    return portOf((await this.waitForLog(/^admin listener ready$/, opts)).address);
  }

  /** The first bound listen port of a proxy frontend (port 0 resolved), from its "frontend listening" line. */
  async listenPort(opts: { frontend?: string; timeoutMs?: number } = {}): Promise<number> {
    const line = await this.waitForLog(/^frontend listening$/, {
      timeoutMs: opts.timeoutMs,
      where: (l) => opts.frontend === undefined || l.frontend === opts.frontend,
    });
    return portOf((line.listen as unknown[] | undefined)?.[0]);
  }

  signal(sig: NodeJS.Signals = 'SIGTERM'): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(sig);
  }

  /** Kills the process (SIGKILL after a grace) and waits for it; safe to call twice. */
  async stop(graceMs = 3000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const t = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(t);
  }
}

/** The port of a logged HOST:PORT ([v6]:PORT too). */
function portOf(address: unknown): number {
  const port = Number(/:(\d+)$/.exec(String(address))?.[1]);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`no bound port in the logged address ${JSON.stringify(address)}`);
  return port;
}

/**
 * The bound ports a kubeward child logged in JSON (--log-format json) on stderr, for tests that
 * spawn it themselves: polls until the first frontend's listen port and the admin port are there.
 */
export function boundPortsInLog(stderr: () => string, timeoutMs = 15_000): Promise<{ listen: number; admin: number }> {
  return waitFor(
    () => {
      const lines = stderr()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as LogLine);
      const listen = lines.find((l) => l.msg === 'frontend listening')?.listen as unknown[] | undefined;
      const admin = lines.find((l) => l.msg === 'admin listener ready')?.address;
      return listen && admin ? { listen: portOf(listen[0]), admin: portOf(admin) } : undefined;
    },
    { timeoutMs, what: `the bound ports in the log; stderr: ${stderr().slice(-500)}` },
  );
}

/** Runs kubeward to completion (bounded) and returns its exit code and output. */
export async function runKubeward(args: string[], timeoutMs = 20_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = new KubewardProcess(args);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), timeoutMs);
  const { code } = await p.exited;
  clearTimeout(timer);
  return { code, stdout: p.stdout, stderr: p.stderr };
}
