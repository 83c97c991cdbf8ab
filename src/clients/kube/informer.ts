// A list-then-watch cache of one kind of object that never gives up: client-node's informer stops
// on the first error, this one re-lists after a backoff (and at once after 410 Gone), forever,
// until close(). Handlers see add/update/delete, including the deletions a re-list reveals.
import type { Clock } from '../../base/clock.ts';
import { describeError } from '../../base/errors.ts';
import type { Logger } from '../../base/logger.ts';
import { KubeApiError } from './kube-api-error.ts';
import type { KubeList, KubeObject, WatchEvent } from './kube-types.ts';
import type { ListOptions, ResourceClient } from './resource-client.ts';

export interface InformerSource<T> {
  list(): Promise<KubeList<T>>;
  /** Resolves when the server ends the stream; rejects on failure (410 as a KubeApiError). */
  watch(resourceVersion: string, onEvent: (ev: WatchEvent<T>) => void, signal: AbortSignal): Promise<void>;
}

export type InformerEvent = 'add' | 'update' | 'delete';
type Handler<T> = (obj: T, old?: T) => void;

export interface InformerOptions<T> {
  name: string;
  source: InformerSource<T>;
  clock: Clock;
  log: Logger;
  /** First retry delay after a failure (default 500 ms); doubles up to maxBackoffMs (default 30 s). */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** What is kept of each object (for example its metadata only); handlers see the kept form. */
  transform?: (obj: T) => T;
}

export function objectKey(obj: KubeObject): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name;
}

export class Informer<T extends KubeObject> {
  readonly #opts: InformerOptions<T>;
  readonly #cache = new Map<string, T>();
  readonly #handlers: Record<InformerEvent, Handler<T>[]> = { add: [], update: [], delete: [] };
  readonly #abort = new AbortController();
  #running: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  #synced = false;
  #failures = 0;
  #restarts = 0;
  #lastError: string | undefined;
  #syncWaiters: (() => void)[] = [];

  constructor(opts: InformerOptions<T>) {
    this.#opts = opts;
  }

  on(event: InformerEvent, handler: Handler<T>): this {
    this.#handlers[event].push(handler);
    return this;
  }

  start(): void {
    this.#running ??= this.#loop();
  }

  /** Stops watching and waits for the loop to end. Idempotent: later calls join the first. */
  close(): Promise<void> {
    return (this.#closing ??= (async () => {
      this.#abort.abort(new Error('informer stopped'));
      await this.#running;
    })());
  }

  hasSynced(): boolean {
    return this.#synced;
  }

  /** Resolves once the first list has landed in the cache. */
  waitForSync(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve) => this.#syncWaiters.push(resolve));
  }

  list(): T[] {
    return [...this.#cache.values()];
  }

  get(key: string): T | undefined {
    return this.#cache.get(key);
  }

  /** Objects in the cache. */
  get size(): number {
    return this.#cache.size;
  }

  status(): { synced: boolean; objects: number; restarts: number; lastError?: string } {
    return { synced: this.#synced, objects: this.#cache.size, restarts: this.#restarts, lastError: this.#lastError };
  }

  async #loop(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      try {
        let rv = await this.#list();
        this.#markSynced();
        this.#failures = 0;
        while (!signal.aborted) {
          const started = this.#opts.clock.now();
          let events = 0;
          await this.#opts.source.watch(
            rv,
            (ev) => {
              events++;
              rv = this.#apply(ev) ?? rv;
            },
            signal,
          );
          // A stream that ends at once with nothing in it, again and again, would spin: back off instead.
          if (!signal.aborted && events === 0 && this.#opts.clock.now() - started < 1000) throw new Error('watch ended at once');
        }
      } catch (err) {
        if (signal.aborted) break;
        this.#restarts++;
        this.#lastError = describeError(err);
        // 410 Gone: our resourceVersion is too old; a fresh list is the cure, no need to wait.
        if (err instanceof KubeApiError && err.status === 410) continue;
        this.#failures++;
        const delay = Math.min(this.#opts.maxBackoffMs ?? 30_000, (this.#opts.initialBackoffMs ?? 500) * 2 ** (this.#failures - 1));
        this.#opts.log.warn({ informer: this.#opts.name, err: this.#lastError, retryInMs: delay }, 'list/watch failed; retrying');
        await this.#opts.clock.sleep(delay, signal).catch(() => undefined);
      }
    }
  }

  /**
   * Lists into the cache; returns the resourceVersion to watch from. A method of its own so that the
   * list as received (every object before the transform, managedFields included) is garbage once it
   * returns: held in #loop's frame it would stay alive for as long as the watch that follows (about
   * 3 KiB per ManagedCluster by heap snapshot).
   */
  async #list(): Promise<string> {
    const list = await this.#opts.source.list();
    this.#replace(list.items);
    return list.metadata.resourceVersion ?? '';
  }

  /** Applies one watch event; returns the resourceVersion to resume from. */
  #apply(ev: WatchEvent<T>): string | undefined {
    const rv = ev.object.metadata?.resourceVersion;
    if (ev.type === 'BOOKMARK') return rv;
    const obj = this.#opts.transform ? this.#opts.transform(ev.object) : ev.object;
    const key = objectKey(obj);
    const old = this.#cache.get(key);
    if (ev.type === 'DELETED') {
      this.#cache.delete(key);
      this.#emit('delete', obj);
    } else {
      this.#cache.set(key, obj);
      this.#emit(old ? 'update' : 'add', obj, old);
    }
    return rv;
  }

  #replace(items: T[]): void {
    const seen = new Set<string>();
    for (const item of items) {
      const obj = this.#opts.transform ? this.#opts.transform(item) : item;
      const key = objectKey(obj);
      seen.add(key);
      const old = this.#cache.get(key);
      this.#cache.set(key, obj);
      if (!old) this.#emit('add', obj);
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.#emit('update', obj, old);
    }
    for (const [key, obj] of this.#cache) {
      if (seen.has(key)) continue;
      this.#cache.delete(key);
      this.#emit('delete', obj);
    }
  }

  #markSynced(): void {
    if (this.#synced) return;
    this.#synced = true;
    for (const w of this.#syncWaiters.splice(0)) w();
  }

  #emit(event: InformerEvent, obj: T, old?: T): void {
    for (const h of this.#handlers[event]) {
      try {
        h(obj, old);
      } catch (err) {
        this.#opts.log.error({ informer: this.#opts.name, event, err: describeError(err) }, 'informer handler threw');
      }
    }
  }
}

/**
 * List and watch through a ResourceClient. The server ends each watch after 5-10 min (random, so
 * that many informers do not reconnect together); silence longer than that plus a minute ends it too.
 */
export function resourceSource<T extends KubeObject>(
  client: ResourceClient<T>,
  namespace?: string,
  opts: ListOptions = {},
  random: () => number = Math.random,
): InformerSource<T> {
  return {
    list: () => client.list(namespace, opts),
    watch: (resourceVersion, onEvent, signal) => {
      const timeoutSeconds = 300 + Math.floor(random() * 300);
      const query = { resourceVersion, timeoutSeconds, labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector };
      return client.watch(namespace, query, onEvent, { signal, idleMs: (timeoutSeconds + 60) * 1000, metadataOnly: opts.metadataOnly });
    },
  };
}
