// The VIPs to publish: those given with --vip, plus every A and AAAA record of --vip-from-dns,
// re-resolved periodically. A failed or empty lookup keeps the last good set.
import type { Logger } from '../base/logger.ts';
import type { Clock } from '../base/clock.ts';
import { describeError } from '../base/errors.ts';
import { canonicalVip, checkVip, printable } from './vip-address.ts';

/** Returns every address of a host name (getaddrinfo semantics, /etc/hosts included). */
export type Resolver = (host: string) => Promise<string[]>;

export interface VipSourceOptions {
  staticVips: readonly string[];
  dnsHost?: string;
  refreshMs: number;
  resolve: Resolver;
  clock: Clock;
  log: Logger;
  onChange: (vips: readonly string[]) => void;
}

export class VipSource {
  readonly #opts: VipSourceOptions;
  #dnsVips: string[] = [];
  #lastError: string | undefined;
  readonly #stop = new AbortController();

  constructor(opts: VipSourceOptions) {
    this.#opts = opts;
  }

  get current(): string[] {
    return mergeVips(this.#opts.staticVips, this.#dnsVips);
  }

  get lastDnsError(): string | undefined {
    return this.#lastError;
  }

  /** First lookup; its failure is returned so the caller can decide whether it is fatal. */
  async start(): Promise<string | undefined> {
    if (!this.#opts.dnsHost) return undefined;
    await this.#refresh(false);
    void this.#loop();
    return this.#lastError;
  }

  close(): void {
    this.#stop.abort();
  }

  async #loop(): Promise<void> {
    const { clock, refreshMs } = this.#opts;
    for (;;) {
      try {
        await clock.sleep(refreshMs, this.#stop.signal);
      } catch {
        return;
      }
      await this.#refresh(true);
    }
  }

  /** Looks the name up again; onChange fires for later changes, not for the first answer. */
  async #refresh(notify: boolean): Promise<void> {
    const { dnsHost, resolve, log } = this.#opts;
    let found: string[];
    try {
      const answers = await resolve(dnsHost!);
      // The same VIP grammar as --vip and as kubeward routes: a record pointing at 169.254.169.254,
      // 0.0.0.0, a multicast or link-local address is refused, never published as a state file.
      const refused = answers.filter((a) => !checkVip(a).ok);
      if (refused.length) log.warn({ host: dnsHost, refused: refused.map((a) => printable(a)) }, 'ignoring DNS answers that are not valid VIPs');
      found = [...new Set(answers.map((a) => canonicalVip(a)).filter((a): a is string => a !== undefined))];
      if (found.length === 0) throw new Error(refused.length ? 'no A or AAAA record is a valid VIP' : 'no A or AAAA records');
    } catch (err) {
      this.#lastError = describeError(err);
      log.warn({ host: dnsHost, err: this.#lastError, keeping: this.#dnsVips }, 'VIP lookup failed; keeping the last good set');
      return;
    }
    this.#lastError = undefined;
    const before = this.current;
    this.#dnsVips = found;
    const after = this.current;
    if (notify && before.join() !== after.join()) {
      log.info({ host: dnsHost, before, after }, 'VIP set changed');
      this.#opts.onChange(after);
    }
  }
}

/** Union in a stable order: static VIPs first, then DNS ones, no duplicates. */
export function mergeVips(staticVips: readonly string[], dnsVips: readonly string[]): string[] {
  return [...new Set([...staticVips, ...[...dnsVips].sort()])];
}
