// An exclusive lock on a file, held through util-linux flock(1) in a child process, because Node has
// no flock(2). The kernel lock is the same one OpenShift's watcher pod takes with `flock`, so the
// two exclude each other during a migration. The child holds the lock until its stdin closes, which
// also happens when this process dies for any reason, so a crash never leaves the lock held.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { resolve } from 'node:path';
import { KubewardError } from '../base/errors.ts';

const CONFLICT_EXIT = 75;

export interface HeldLock {
  readonly path: string;
  release(): Promise<void>;
}

export interface LockOptions {
  path: string;
  timeoutMs: number;
  /** Called once if the lock is busy, before waiting (to log who waits for what). */
  onWait?: () => void;
  signal?: AbortSignal;
}

export function acquireLock(opts: LockOptions): Promise<HeldLock> {
  const waitSec = String(Math.max(0, opts.timeoutMs / 1000));
  // Absolute, so a path like "--help" reaches flock(1) as a file, never as an option.
  const path = resolve(opts.path);
  return new Promise((resolveLock, reject) => {
    let child: ChildProcessByStdio<Writable, Readable, Readable>;
    try {
      child = spawn(
        'flock',
        ['--exclusive', '--conflict-exit-code', String(CONFLICT_EXIT), '--wait', waitSec, path, 'sh', '-c', 'echo locked; exec cat >/dev/null'],
        { stdio: ['pipe', 'pipe', 'pipe'] },
      );
    } catch (err) {
      reject(new KubewardError('E_EXEC', `cannot run flock: ${(err as Error).message}`, { cause: err }));
      return;
    }
    let stderr = '';
    let locked = false;
    // Not locked within 100 ms means someone else holds it: say so before the long wait.
    const waitHint = setTimeout(() => opts.onWait?.(), 100);
    const onAbort = () => child.kill('SIGTERM');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (locked || !d.includes('locked')) return;
      locked = true;
      clearTimeout(waitHint);
      opts.signal?.removeEventListener('abort', onAbort);
      resolveLock(heldLock(opts.path, child));
    });
    child.on('error', (err) => {
      clearTimeout(waitHint);
      reject(new KubewardError('E_EXEC', `cannot run flock (util-linux): ${err.message}`, { cause: err }));
    });
    child.on('exit', (code) => {
      if (locked) return;
      clearTimeout(waitHint);
      if (code === CONFLICT_EXIT) {
        reject(new KubewardError('E_LOCK_TIMEOUT', `${opts.path} is still locked by another process after ${waitSec}s`));
      } else if (opts.signal?.aborted) {
        reject(new KubewardError('E_CLOSED', `gave up waiting for ${opts.path}`));
      } else {
        reject(new KubewardError('E_IO', `cannot lock ${opts.path}: ${stderr.trim() || `flock exited ${code}`}`));
      }
    });
  });
}

function heldLock(path: string, child: ChildProcessByStdio<Writable, Readable, Readable>): HeldLock {
  let released: Promise<void> | undefined;
  return {
    path,
    release: () =>
      (released ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.stdin.end();
      })),
  };
}
