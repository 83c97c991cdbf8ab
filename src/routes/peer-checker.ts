// Checks the --down-peer apiservers on a timer (thin I/O adapter): one probe per peer per interval,
// every probe a new connection straight to the peer's own address (never the VIP, so our rules never
// touch it). A peer counts as healthy after one passing check and stops after one failing check:
// a redirect is only worth making to a peer that answered last time.
import type { Clock } from '../base/clock.ts';
import type { Logger } from '../base/logger.ts';
import type { ProbeResult } from '../probe/probe-result.ts';
import { probeHttps } from '../probe/https-probe.ts';
import { ProbeTlsContext } from '../probe/probe-tls-context.ts';
import { probeTcp } from '../probe/socket-probe.ts';

export type PeerCheckKind = 'readyz' | 'tcp';

export interface PeerCheckerOptions {
  peers: readonly string[];
  port: number;
  check: PeerCheckKind;
  intervalMs: number;
  clock: Clock;
  log: Logger;
  /** Called when the healthy set changes, so the rules follow. */
  onChange: () => void;
  /** The probe; default an HTTPS GET of /readyz (certificate not verified, as OpenShift's watcher) or a TCP connect. */
  probe?: (peer: string, signal: AbortSignal) => Promise<ProbeResult>;
}

interface PeerStatus {
  peer: string;
  healthy: boolean;
  lastCheckAt?: string;
  detail?: string;
}

export class PeerChecker {
  readonly #o: PeerCheckerOptions;
  readonly #state = new Map<string, PeerStatus>();
  readonly #stop = new AbortController();
  /** One TLS context for every peer check (no material: verification is off). */
  readonly #tls = new ProbeTlsContext();
  #loop: Promise<void> | undefined;

  constructor(o: PeerCheckerOptions) {
    this.#o = o;
    for (const peer of o.peers) this.#state.set(peer, { peer, healthy: false });
  }

  /** Runs the first round of checks (so the first sync knows the peers), then keeps checking. */
  async start(): Promise<void> {
    await this.#round();
    this.#loop = this.#run();
  }

  /** Peers whose last check passed, in the configured order. */
  healthy(): string[] {
    return this.#o.peers.filter((p) => this.#state.get(p)?.healthy === true);
  }

  get status(): unknown {
    return { port: this.#o.port, check: this.#o.check, intervalMs: this.#o.intervalMs, peers: [...this.#state.values()] };
  }

  async close(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      try {
        await this.#o.clock.sleep(this.#o.intervalMs, this.#stop.signal);
      } catch {
        return; // closed
      }
      await this.#round();
    }
  }

  async #round(): Promise<void> {
    const timeoutMs = Math.max(50, Math.min(this.#o.intervalMs - 50, 2000));
    const results = await Promise.all(this.#o.peers.map(async (peer) => [peer, await this.#probe(peer, timeoutMs)] as const));
    if (this.#stop.signal.aborted) return;
    let changed = false;
    for (const [peer, r] of results) {
      const before = this.#state.get(peer)!;
      if (before.healthy !== r.ok) {
        changed = true;
        this.#o.log.info({ peer, healthy: r.ok, detail: r.detail }, r.ok ? 'down-peer check passes' : 'down-peer check fails');
      }
      this.#state.set(peer, {
        peer,
        healthy: r.ok,
        lastCheckAt: new Date(this.#o.clock.now()).toISOString(),
        detail: r.ok ? undefined : `${r.reason}: ${r.detail}`,
      });
    }
    if (changed) this.#o.onChange();
  }

  #probe(peer: string, timeoutMs: number): Promise<ProbeResult> {
    if (this.#o.probe) return this.#o.probe(peer, this.#stop.signal);
    if (this.#o.check === 'tcp') return probeTcp({ host: peer, port: this.#o.port, timeoutMs }, this.#stop.signal);
    const host = peer.includes(':') ? `[${peer}]` : peer;
    return probeHttps(
      { url: new URL(`https://${host}:${this.#o.port}/readyz`), timeoutMs, insecureSkipTlsVerify: true, tlsContext: this.#tls },
      this.#stop.signal,
    );
  }
}
