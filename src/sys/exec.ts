// Runs a command with a timeout, optional stdin, and an error that carries the tail of stderr.
import { spawn } from 'node:child_process';
import { KubewardError } from '../base/errors.ts';

export interface ExecResult {
  stdout: string;
  stderr: string;
  code: number;
}

export interface ExecOptions {
  input?: string;
  timeoutMs?: number;
  /** Exit codes that are not failures; default [0]. */
  okCodes?: number[];
  env?: NodeJS.ProcessEnv;
}

/** Runs argv[0] with the rest as arguments (no shell). Throws E_EXEC on a bad exit, E_TIMEOUT on timeout. */
export function execCommand(argv: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
  const [cmd, ...args] = argv;
  if (!cmd) throw new KubewardError('E_EXEC', 'empty command');
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env: opts.env });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new KubewardError('E_EXEC', `cannot run ${cmd}: ${err.message}`, { cause: err }));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const exit = code ?? -1;
      if (timedOut) return reject(new KubewardError('E_TIMEOUT', `${cmd} did not finish within ${timeoutMs} ms`));
      if (!(opts.okCodes ?? [0]).includes(exit)) {
        const tail = stderr.trim().split('\n').slice(-5).join(' | ');
        return reject(new KubewardError('E_EXEC', `${argv.join(' ').slice(0, 120)} failed (${signal ?? `exit ${exit}`}): ${tail}`));
      }
      resolve({ stdout, stderr, code: exit });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? '');
  });
}
