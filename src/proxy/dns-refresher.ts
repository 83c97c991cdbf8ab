// Resolves a frontend's --upstream-dns names now and every refresh interval, and hands the joined
// answer to the frontend (which keeps the last good set: dns-upstreams.ts). A failing name is
// logged and keeps its previous addresses; the lookup is bounded so a hung resolver never stalls
// the loop.
// A static import: the bundle (scripts/build.ts) turns a dynamic import of a builtin into a module
// with a default export only, so `lookup` read from it is undefined in dist.
import { lookup } from 'node:dns/promises';
import { after, type Clock } from '../base/clock.ts';
import { describeError } from '../base/errors.ts';
import type { Logger } from '../base/logger.ts';
import { formatHostPort, type HostPort } from '../config/fields.ts';
import { joinAnswers, type NameAndPort } from './dns-upstreams.ts';

export type Lookup = (name: string) => Promise<string[]>;

const LOOKUP_TIMEOUT_MS = 5000;

/** The system resolver (/etc/hosts, then DNS, as most clients resolve), every address of the name. */
export const systemLookup: Lookup = async (name) => {
  return (await lookup(name, { all: true, verbatim: true })).map((a) => a.address);
};

export interface DnsRefresherOptions {
  frontend: string;
  names: readonly NameAndPort[];
  intervalMs: number;
  clock: Clock;
  lookup: Lookup;
  log: Logger;
  onAnswer: (list: HostPort[]) => void;
}

export class DnsRefresher {
  readonly #o: DnsRefresherOptions;
  #byName = new Map<string, HostPort[]>();
  #last = '';
  #cancel: (() => void) | undefined;
  #closed = false;

  constructor(o: DnsRefresherOptions) {
    this.#o = o;
  }

  /** Resolves every name once and hands over the answer. Never throws. */
  async refresh(): Promise<void> {
    const o = this.#o;
    const answers = await Promise.all(
      o.names.map((n) =>
        withTimeout(o.lookup(n.name), LOOKUP_TIMEOUT_MS).catch((err: unknown) => {
          o.log.warn({ frontend: o.frontend, name: n.name, err: describeError(err) }, 'cannot resolve an --upstream-dns name: its last known addresses stay');
          return undefined;
        }),
      ),
    );
    if (this.#closed) return;
    const { list, byName } = joinAnswers(o.names, answers, this.#byName);
    this.#byName = byName;
    const text = list.map(formatHostPort).join(',');
    if (text !== this.#last) {
      o.log.info(
        { frontend: o.frontend, names: o.names.map((n) => `${n.name}:${n.port}`), addresses: list.map(formatHostPort) },
        'upstream DNS names resolved',
      );
      this.#last = text;
    }
    o.onAnswer(list);
  }

  start(): void {
    const loop = (): void => {
      if (this.#closed) return;
      this.#cancel = after(this.#o.clock, this.#o.intervalMs, () => void this.refresh().then(loop));
    };
    loop();
  }

  close(): void {
    this.#closed = true;
    this.#cancel?.();
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    t.unref();
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(t);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
