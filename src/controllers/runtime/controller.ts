// A controller: workers take keys from the work queue and reconcile them, one run per key at a
// time. A reconcile returns when to look again (or nothing); a thrown error retries the key with
// per-key backoff. A periodic resync re-adds every key, so nothing waits on an event forever.
// Isolation: the number of workers follows the number of keys (workersFor), and a
// reconcile that is still running after slotTimeoutMs gives its worker back: its key stays busy (no
// second run of it starts) until it returns, but a few hung clusters can never hold every worker.
import type { Clock } from '../../base/clock.ts';
import { after, jitter } from '../../base/clock.ts';
import { describeError, isKubewardError } from '../../base/errors.ts';
import type { Logger } from '../../base/logger.ts';
import type { BackoffPolicy } from './backoff.ts';
import type { ControllerMetrics } from './controller-metrics.ts';
import { WorkQueue } from './work-queue.ts';

export interface ReconcileResult {
  /** Look at the key again after this long (the poll interval of a wait); undefined: only on events. */
  requeueAfterMs?: number;
}

/** One reconcile of one key: observe → decide (pure) → execute. The signal aborts on stop. */
export type Reconciler = (key: string, signal: AbortSignal) => Promise<ReconcileResult | void>;

export interface ControllerOptions {
  name: string;
  reconcile: Reconciler;
  clock: Clock;
  log: Logger;
  metrics: ControllerMetrics;
  /** Least number of keys reconciled in parallel (different keys only; default 2). */
  workers?: number;
  /** Workers wanted now (asked on every enqueue; more are started, none stopped); default: `workers`. */
  workersFor?: () => number;
  /** Upper bound on workers, whatever workersFor says (default 256). */
  maxWorkers?: number;
  /** A reconcile running longer than this frees its worker (its key stays busy until it returns); default: never. */
  slotTimeoutMs?: number;
  /** Every key from listKeys is re-added this often (±10 %); 0 turns resync off. */
  resyncMs?: number;
  listKeys?: () => string[];
  backoff?: BackoffPolicy;
}

export interface ControllerStatus {
  name: string;
  running: boolean;
  workers: number;
  queueDepth: number;
  reconciles: number;
  errors: number;
  lastErrors: Record<string, string>;
}

export class Controller {
  readonly #o: ControllerOptions;
  readonly #queue: WorkQueue;
  readonly #abort = new AbortController();
  readonly #lastErrors = new Map<string, string>();
  #workers: Promise<void>[] = [];
  /** Reconciles in flight, with or without a worker. */
  readonly #runs = new Set<Promise<void>>();
  #reconciles = 0;
  #errors = 0;

  constructor(opts: ControllerOptions) {
    this.#o = opts;
    this.#queue = new WorkQueue(opts.clock, opts.backoff);
  }

  get name(): string {
    return this.#o.name;
  }

  enqueue(key: string, afterMs = 0): void {
    this.#queue.addAfter(key, afterMs);
    this.#o.metrics.queueDepth.set({ controller: this.#o.name }, this.#queue.depth);
    if (this.#started) this.#scale();
  }

  #started = false;

  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#scale();
    if (this.#o.resyncMs && this.#o.listKeys) void this.#resyncLoop(this.#o.resyncMs, this.#o.listKeys);
  }

  /** Workers running now. */
  get workers(): number {
    return this.#workers.length;
  }

  #scale(): void {
    if (this.#abort.signal.aborted) return;
    const least = this.#o.workers ?? 2;
    const wanted = Math.min(this.#o.maxWorkers ?? 256, Math.max(least, this.#o.workersFor?.() ?? least));
    while (this.#workers.length < wanted) this.#workers.push(this.#work());
  }

  /** Stops taking keys, aborts running reconciles and waits for them to return (idempotent). */
  close(): Promise<void> {
    this.#abort.abort(new Error('controller stopped'));
    this.#queue.shutDown();
    return Promise.all([...this.#workers, ...this.#runs]).then(() => undefined);
  }

  /** No key queued or in flight (tests wait for this between steps of a fake clock). */
  get idle(): boolean {
    return this.#queue.idle;
  }

  status(): ControllerStatus {
    return {
      name: this.#o.name,
      running: this.#started && !this.#abort.signal.aborted,
      workers: this.#workers.length,
      queueDepth: this.#queue.depth,
      reconciles: this.#reconciles,
      errors: this.#errors,
      lastErrors: Object.fromEntries(this.#lastErrors),
    };
  }

  async #work(): Promise<void> {
    for (;;) {
      const key = await this.#queue.get();
      if (key === undefined) return;
      this.#o.metrics.queueDepth.set({ controller: this.#o.name }, this.#queue.depth);
      const run = this.#reconcileOne(key).finally(() => {
        this.#queue.done(key);
        this.#runs.delete(run);
      });
      this.#runs.add(run);
      const slotMs = this.#o.slotTimeoutMs;
      if (slotMs === undefined) {
        await run;
        continue;
      }
      // Past its slot the run goes on without a worker; the key is done only when it returns.
      await this.#slot(run, slotMs);
    }
  }

  /**
   * Resolves when run settles or slotMs has passed, whichever is first. A plain timer of the clock,
   * cancelled when the run returns in time (nearly always): no AbortController and no AbortError
   * per reconcile (docs/design/operator-start.md).
   */
  #slot(run: Promise<void>, slotMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const cancel = after(this.#o.clock, slotMs, resolve);
      const done = (): void => {
        cancel();
        resolve();
      };
      run.then(done, done);
    });
  }

  async #reconcileOne(key: string): Promise<void> {
    const { name, metrics, log } = this.#o;
    const end = metrics.duration.startTimer({ controller: name });
    this.#reconciles++;
    try {
      const result = (await this.#o.reconcile(key, this.#abort.signal)) ?? {};
      this.#queue.forget(key);
      this.#lastErrors.delete(key);
      const requeue = result.requeueAfterMs !== undefined;
      metrics.reconciles.inc({ controller: name, result: requeue ? 'requeue' : 'success' });
      if (requeue && !this.#abort.signal.aborted) this.#queue.addAfter(key, result.requeueAfterMs!);
    } catch (err) {
      if (this.#abort.signal.aborted) return;
      this.#errors++;
      metrics.reconciles.inc({ controller: name, result: 'error' });
      metrics.errors.inc({ controller: name });
      this.#lastErrors.set(key, describeError(err));
      const delay = this.#queue.addWithBackoff(key);
      log.warn({ controller: name, key, err: describeError(err), code: isKubewardError(err) ? err.code : undefined, retryInMs: delay }, 'reconcile failed');
    } finally {
      end();
    }
  }

  async #resyncLoop(everyMs: number, listKeys: () => string[]): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      try {
        await this.#o.clock.sleep(jitter(everyMs, 0.1), signal);
      } catch {
        return;
      }
      for (const key of listKeys()) this.enqueue(key);
    }
  }
}
