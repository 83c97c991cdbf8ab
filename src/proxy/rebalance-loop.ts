// Rebalancing, the adapter: every interval (jittered ±50%, so a node's frontends and the nodes of a
// cluster do not act in step) asks planRebalance, and closes at most one old connection.
import { jitter, type Clock } from '../base/clock.ts';
import type { ConnectionSet } from './connection-set.ts';
import { pickConnectionToMove, planRebalance, type MoveCandidate, type RebalanceDecision } from './plan-rebalance.ts';
import type { RelayedConnection } from './relay/relayed-connection.ts';
import type { RebalanceConfig } from './proxy-config.ts';
import type { UpstreamList } from './upstream-list.ts';

export interface RebalanceLoopOptions {
  list: UpstreamList;
  conns: ConnectionSet;
  clock: Clock;
  random: () => number;
  /** Read on every round, so a reload changes them in place. */
  settings: () => { slowStartMs: number; rebalance: RebalanceConfig };
  /** Called after a connection was closed. */
  onClose: (decision: Extract<RebalanceDecision, { action: 'close' }>) => void;
  /** A round that threw (a bug): reported, and the loop goes on with the next round. */
  onError?: (err: unknown) => void;
}

export class RebalanceLoop {
  readonly #opts: RebalanceLoopOptions;
  readonly #abort = new AbortController();
  #done: Promise<void> | undefined;
  /** Rounds in a row that wanted to close a connection and found none quiet (pickConnectionToMove). */
  #roundsWithoutQuiet = 0;

  constructor(opts: RebalanceLoopOptions) {
    this.#opts = opts;
  }

  start(): void {
    this.#done ??= this.#run();
  }

  /** One round: decide and close at most one connection. Returns the decision. */
  step(): RebalanceDecision {
    const { list, conns, clock, settings } = this.#opts;
    const { slowStartMs, rebalance } = settings();
    const now = clock.now();
    const cutoff = now - rebalance.minAgeMs;
    const decision = planRebalance(list.all(), (key) => conns.settledCount(key, cutoff), {
      thresholdConnections: rebalance.thresholdConnections,
      now,
      slowStartMs,
    });
    if (decision.action !== 'close') return decision;
    const settled = conns.settled(decision.from, cutoff);
    if (settled.length === 0) return { action: 'none', why: 'balanced' };
    const pick = pickConnectionToMove(settled.map(lookAgain), this.#roundsWithoutQuiet);
    if (pick === 'wait') {
      this.#roundsWithoutQuiet++;
      return { action: 'none', why: 'busy' };
    }
    this.#roundsWithoutQuiet = 0;
    // Abortive, like a drain: at L4 there is no GOAWAY to send, and the client (client-go) treats
    // a reset like any broken connection: it reconnects and re-establishes its watches.
    settled[pick]!.destroy();
    this.#opts.onClose(decision);
    return decision;
  }

  async close(): Promise<void> {
    this.#abort.abort();
    await this.#done;
  }

  async #run(): Promise<void> {
    const { clock, random, settings } = this.#opts;
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      try {
        await clock.sleep(jitter(settings().rebalance.intervalMs, 0.5, random), signal);
      } catch {
        return;
      }
      try {
        if (settings().rebalance.enabled) this.step();
      } catch (err) {
        this.#opts.onError?.(err);
      }
    }
  }
}

/** Whether each direction moved bytes since rebalancing last looked at the connection; remembers the counts for the next look. */
function lookAgain(c: RelayedConnection): MoveCandidate {
  const toUpstream = c.bytesToUpstream;
  const toClient = c.bytesToClient;
  const seen = { clientQuiet: c.seenToUpstream === toUpstream, upstreamQuiet: c.seenToClient === toClient };
  c.seenToUpstream = toUpstream;
  c.seenToClient = toClient;
  return seen;
}
