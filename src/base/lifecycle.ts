// Shutdown in a written-down order: steps run one after another, in the order they were added,
// each bounded by a timeout; the sequence runs once, and later callers join the same completion.
import type { Logger } from './logger.ts';
import { describeError } from './errors.ts';

export interface ShutdownStep {
  name: string;
  run: () => Promise<void> | void;
  /** Longest the step may take before the sequence moves on; 0 or missing means 10 s. */
  timeoutMs?: number;
}

export class Shutdown {
  readonly #steps: ShutdownStep[] = [];
  readonly #log: Logger;
  #done: Promise<void> | undefined;
  #reason: string | undefined;
  readonly #finished = Promise.withResolvers<string>();

  constructor(log: Logger) {
    this.#log = log;
  }

  /** Resolves with the reason once a run has completed, whoever started it. */
  get finished(): Promise<string> {
    return this.#finished.promise;
  }

  /** Adds a step; steps run in the order added. */
  add(name: string, run: ShutdownStep['run'], timeoutMs?: number): void {
    this.#steps.push({ name, run, timeoutMs });
  }

  get started(): boolean {
    return this.#done !== undefined;
  }

  /** Why the shutdown runs ("received SIGTERM", "uncaught exception", ...), once it does. */
  get reason(): string | undefined {
    return this.#reason;
  }

  run(reason: string): Promise<void> {
    this.#reason ??= reason;
    this.#done ??= this.#runSteps(reason);
    return this.#done;
  }

  async #runSteps(reason: string): Promise<void> {
    // Nothing to close (a start that failed early): no lines besides the caller's one-line error.
    const log = this.#steps.length ? this.#log.info.bind(this.#log) : this.#log.debug.bind(this.#log);
    log({ reason, steps: this.#steps.map((s) => s.name) }, 'shutting down');
    for (const step of this.#steps) {
      const started = Date.now();
      try {
        await withTimeout(Promise.resolve().then(step.run), step.timeoutMs || 10_000);
        this.#log.debug({ step: step.name, ms: Date.now() - started }, 'shutdown step done');
      } catch (err) {
        this.#log.error({ step: step.name, err: describeError(err) }, 'shutdown step failed; continuing');
      }
    }
    log('shutdown complete');
    this.#finished.resolve(reason);
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

/**
 * Resolves at the next SIGTERM or SIGINT, keeping the process alive until then (a referenced timer:
 * a pending promise alone would let the loop end). For a process that has handed its work on and
 * must not exit before its supervisor says so.
 */
export function untilSignal(proc: NodeJS.Process = process): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const alive = setInterval(() => undefined, 2 ** 30);
    const done = (signal: NodeJS.Signals): void => {
      clearInterval(alive);
      proc.removeListener('SIGTERM', done);
      proc.removeListener('SIGINT', done);
      resolve(signal);
    };
    proc.once('SIGTERM', done);
    proc.once('SIGINT', done);
  });
}

/**
 * SIGTERM and SIGINT run the shutdown once and then let the process exit 0 (the caller's handles
 * are closed by then); a second signal while it runs forces exit 1.
 */
export function exitOnSignals(shutdown: Shutdown, log: Logger, proc: NodeJS.Process = process): void {
  // Only a second signal forces the exit: a shutdown something else began (a listener hand-over,
  // whose successor's preStop hook ends in kubelet's SIGTERM) is joined by the first one, so its
  // steps (the drain, the hand-over's linger) still run.
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) {
      log.warn({ signal }, 'second signal during shutdown: exiting now');
      proc.exit(1);
    }
    signalled = true;
    if (shutdown.started) log.info({ signal, reason: shutdown.reason }, 'signal during a shutdown under way: joining it');
    void shutdown.run(`received ${signal}`).then(() => {
      proc.removeListener('SIGTERM', onSignal);
      proc.removeListener('SIGINT', onSignal);
      // Anything still holding the loop open after the steps is a leak; exit rather than hang.
      setTimeout(() => proc.exit(proc.exitCode ?? 0), 1000).unref();
    });
  };
  proc.on('SIGTERM', onSignal);
  proc.on('SIGINT', onSignal);
}

/** Wraps a close function so that it runs once and every caller gets the same promise. */
export function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= fn());
}

/**
 * The last resort: an uncaught exception or unhandled rejection is a bug, so it is logged and the
 * process leaves through the ordered shutdown (watch publishes .down on the way) and exits 1, so a
 * supervisor restarts it. A second one during that shutdown is only logged; if the shutdown itself
 * hangs, the process exits anyway after exitAfterMs. Returns the undo.
 */
export function exitOnUncaught(shutdown: Shutdown, log: Logger, proc: NodeJS.Process = process, exitAfterMs = 60_000): () => void {
  const onFatal = (kind: string) => (err: unknown) => {
    log.fatal({ err: describeError(err), kind }, `${kind}: shutting down`);
    log.debug({ stack: err instanceof Error ? err.stack : undefined }, 'where it was thrown');
    if (shutdown.started) return;
    setTimeout(() => proc.exit(1), exitAfterMs).unref();
    void shutdown.run(kind).finally(() => proc.exit(1));
  };
  const onException = onFatal('uncaught exception');
  const onRejection = onFatal('unhandled rejection');
  proc.on('uncaughtException', onException);
  proc.on('unhandledRejection', onRejection);
  return () => {
    proc.off('uncaughtException', onException);
    proc.off('unhandledRejection', onRejection);
  };
}

/**
 * A daemon that stopped (fatal error, or its work done) must end: anything still holding the loop
 * open after its shutdown steps (a child, a timer) is a leak, not a reason to stay alive.
 */
export function exitSoon(code: number, proc: NodeJS.Process = process, afterMs = 1000): void {
  setTimeout(() => proc.exit(code), afterMs).unref();
}

/**
 * SIGHUP and SIGUSR2 would end a Node process at once (the default action), skipping the ordered
 * shutdown: a watch would leave its .up files behind. A mode that reloads on SIGHUP adds its own
 * listener; otherwise the signal is logged and ignored.
 */
export function ignoreStraySignals(log: Logger, proc: NodeJS.Process = process): void {
  for (const signal of ['SIGHUP', 'SIGUSR2'] as const) {
    proc.on(signal, () => {
      if (proc.listenerCount(signal) === 1) log.warn({ signal }, 'signal ignored: this mode does not use it');
    });
  }
}
