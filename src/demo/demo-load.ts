// The demo's clients: short requests on new connections at a steady rate, and long watch-like
// streams that reconnect when cut. Bounded by the caller's signal; counts what clients saw.
import { request, type RequestOptions } from 'node:https';

export interface LoadCounters {
  sent: number;
  ok: number;
  failed: number;
  lastError: string | undefined;
  watchesOpen: number;
  watchReconnects: number;
}

export interface LoadOptions {
  host: string;
  port: number;
  ca: string;
  intervalMs: number;
  watches: number;
  signal: AbortSignal;
}

export function startLoad(opts: LoadOptions): { counters: LoadCounters; done: Promise<void> } {
  const counters: LoadCounters = { sent: 0, ok: 0, failed: 0, lastError: undefined, watchesOpen: 0, watchReconnects: 0 };
  const base: RequestOptions = { host: opts.host, port: opts.port, ca: opts.ca, servername: 'localhost', agent: false };
  const inflight = new Set<Promise<void>>();
  const shortRequest = (): Promise<void> =>
    new Promise((resolve) => {
      counters.sent++;
      const req = request({ ...base, path: '/version', timeout: 5000 }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) counters.ok++;
          else fail(`HTTP ${res.statusCode}`);
          resolve();
        });
      });
      const fail = (why: string) => {
        counters.failed++;
        counters.lastError = why;
      };
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (err) => {
        fail(err.message);
        resolve();
      });
      req.end();
    });
  const ticker = setInterval(() => {
    if (opts.signal.aborted) return;
    const p = shortRequest().finally(() => inflight.delete(p));
    inflight.add(p);
  }, opts.intervalMs);
  const watch = async (): Promise<void> => {
    let first = true;
    while (!opts.signal.aborted) {
      if (!first) counters.watchReconnects++;
      first = false;
      await new Promise<void>((resolve) => {
        const req = request({ ...base, path: '/api/v1/namespaces/default/pods?watch=1', signal: opts.signal }, (res) => {
          counters.watchesOpen++;
          res.resume();
          res.on('close', () => {
            counters.watchesOpen--;
            resolve();
          });
        });
        req.on('error', () => resolve());
        req.end();
      });
      if (!opts.signal.aborted) await new Promise((r) => setTimeout(r, 200));
    }
  };
  const watchers = Array.from({ length: opts.watches }, () => watch());
  const done = new Promise<void>((resolve) => {
    opts.signal.addEventListener(
      'abort',
      () => {
        clearInterval(ticker);
        void Promise.all([...inflight, ...watchers]).then(() => resolve());
      },
      { once: true },
    );
  });
  return { counters, done };
}
