// One frontend's upstream pool: per-upstream state with rise/fall hysteresis, fed by active checks
// and by the data path's connect failures, so passive and active health share one score. Pure.
import type { ProbeReason, ProbeResult } from '../probe/probe-result.ts';
import { isPaced, refillBucket, takeToken, type PaceConfig } from './recovery-pace.ts';
import type { KubeMinor } from './version-skew.ts';

/** unknown: not checked yet (usable, ranked after up); up: passing; down: failing or refused a connect. */
export type UpstreamState = 'unknown' | 'up' | 'down';
export type TransitionCause = 'check' | 'connect';

export interface Transition {
  at: number;
  from: UpstreamState;
  to: UpstreamState;
  cause: TransitionCause;
  reason: ProbeReason;
  /** The evidence: status line, error message, latency. */
  detail: string;
}

export interface Upstream {
  readonly key: string;
  /** Runs on this node (loopback or a local interface address): preferred when healthy. */
  local: boolean;
  /** A last resort (a configured seed that discovery did not list): used only when no other upstream is usable. */
  backup: boolean;
  state: UpstreamState;
  /** Taken out by an operator: no new connections, not even in fail-open. */
  drained: boolean;
  /** Consecutive results of one kind: +n successes, -n failures. */
  score: number;
  /** Smoothed latency of recent checks; undefined until the first success. */
  latencyMs: number | undefined;
  /** Last time it was seen up (ms), for the fail-open order. */
  lastUpAt: number | undefined;
  /** Connections in flight or established through this proxy. */
  active: number;
  /** Its connections were ordered closed since it last went down; reset when it comes back up. */
  evicted: boolean;
  /** When it came back (down to up, undrained, or first up after joining a running pool): the slow start's origin. */
  slowStartFrom: number | undefined;
  /** Joined a running pool and has not been up yet: its first rise starts a slow start too. */
  joined: boolean;
  /** Its Kubernetes version from GET /version, when the frontend knows the kubelet's (version-skew.ts). */
  version: KubeMinor | undefined;
  /** Recovery pacing's token bucket (recovery-pace.ts); both undefined: full. */
  paceTokens: number | undefined;
  paceAt: number | undefined;
  lastCheck: (ProbeResult & { at: number }) | undefined;
  /** Most recent first, at most TRANSITIONS_KEPT. */
  transitions: Transition[];
}

export interface UpstreamEvent {
  transition?: Transition;
  /** The adapter should close this upstream's established connections (spread over time). */
  evict: boolean;
}

export interface HealthPolicy {
  /** Consecutive successes that bring a down upstream back up (at least 1). */
  rise: number;
  /** Consecutive check failures that take an up upstream down (at least 1). */
  fall: number;
}

const TRANSITIONS_KEPT = 5;
const LATENCY_WEIGHT = 0.3;

/**
 * Failures that mean nobody is serving the upstream's connections any more. A server that answers
 * "not ready" (http-status) is alive and draining itself, as kube-apiserver does in graceful
 * shutdown: it gets no new connections, but the ones it has are left for it to finish.
 */
export function isDeadReason(reason: ProbeReason): boolean {
  return reason !== 'ok' && reason !== 'http-status' && reason !== 'local';
}

export interface UpstreamMember {
  key: string;
  local: boolean;
  backup?: boolean;
}

export class UpstreamList {
  #policy: HealthPolicy;
  #upstreams: Upstream[] = [];
  #started = false;

  constructor(members: readonly UpstreamMember[], policy: HealthPolicy) {
    this.#policy = policy;
    this.reconcile(members);
    this.#started = true;
  }

  /** New rise/fall counts (a reload); scores so far are kept. */
  setPolicy(policy: HealthPolicy): void {
    this.#policy = policy;
  }

  all(): readonly Upstream[] {
    return this.#upstreams;
  }

  get(key: string): Upstream | undefined {
    return this.#upstreams.find((u) => u.key === key);
  }

  /**
   * Sets the membership; upstreams that stay keep their state, counts and history (and take the
   * member's local/backup flags). Upstreams that join a running pool slow-start on their first rise.
   */
  reconcile(members: readonly UpstreamMember[]): { added: string[]; removed: string[] } {
    const old = new Map(this.#upstreams.map((u) => [u.key, u]));
    const next = members.map((m) => {
      const u = old.get(m.key) ?? newUpstream(m.key, m.local, this.#started);
      u.local = m.local;
      u.backup = m.backup ?? false;
      return u;
    });
    const keys = new Set(next.map((u) => u.key));
    this.#upstreams = next;
    return {
      added: next.filter((u) => !old.has(u.key)).map((u) => u.key),
      removed: [...old.keys()].filter((k) => !keys.has(k)),
    };
  }

  /**
   * An active check's result. The first result decides an unknown upstream either way. A local
   * fault (reason local: no fds, unreadable token, bad TLS material) says nothing about the
   * upstream: its state, score and connections stay as they are.
   */
  recordCheck(key: string, result: ProbeResult, now: number): UpstreamEvent {
    const u = this.get(key);
    if (!u || result.reason === 'local') return { evict: false };
    u.lastCheck = { ...result, at: now };
    if (result.ok) {
      u.score = Math.max(u.score, 0) + 1;
      u.latencyMs = u.latencyMs === undefined ? result.latencyMs : u.latencyMs + LATENCY_WEIGHT * (result.latencyMs - u.latencyMs);
      const rises = u.state === 'unknown' || (u.state === 'down' && u.score >= this.#policy.rise);
      if (rises) {
        u.evicted = false;
        if (u.state === 'down' || u.joined) startRecovery(u, now);
        u.joined = false;
      }
      const transition = rises ? moveTo(u, 'up', 'check', result, now) : undefined;
      if (u.state === 'up') u.lastUpAt = now;
      return { transition, evict: false };
    }
    u.score = Math.min(u.score, 0) - 1;
    // A refused check needs no confirmation: nothing listens, so no new connection can succeed
    // (the data path's refused connect does the same). Eviction still waits for `fall` failures.
    const falls = u.state === 'unknown' || (u.state === 'up' && (-u.score >= this.#policy.fall || result.reason === 'refused'));
    const transition = falls ? moveTo(u, 'down', 'check', result, now) : undefined;
    const evict = u.state === 'down' && -u.score >= this.#policy.fall && isDeadReason(result.reason) && !u.evicted;
    if (evict) u.evicted = true;
    return { transition, evict };
  }

  /**
   * A refused or timed-out connect, or a connection the upstream never answered (firstByteTimeout),
   * from the data path: down at once (nginx's max_fails=1), and it counts as one failure, so the
   * next failed check confirms it.
   */
  recordConnectFailure(key: string, failure: { reason: ProbeReason; detail: string }, now: number): UpstreamEvent {
    const u = this.get(key);
    if (!u || failure.reason === 'local') return { evict: false };
    u.score = Math.min(u.score, 0) - 1;
    if (u.state === 'down') return { evict: false };
    return { transition: moveTo(u, 'down', 'connect', { ...failure, latencyMs: 0, status: 0, ok: false }, now), evict: false };
  }

  /**
   * Drain (true) or undrain (false); draining asks for the upstream's connections to be closed,
   * undraining starts a slow start (when `now` is given).
   */
  setDrained(key: string, drained: boolean, now?: number): UpstreamEvent | undefined {
    const u = this.get(key);
    if (!u) return undefined;
    const evict = drained && !u.drained;
    if (!drained && u.drained && now !== undefined) startRecovery(u, now);
    u.drained = drained;
    return { evict };
  }

  acquire(key: string): void {
    const u = this.get(key);
    if (u) u.active++;
  }

  /** A new connection to an upstream in its recovery window spends one of its pacing tokens. */
  spendPaceToken(key: string, now: number, pace: PaceConfig, slowStartMs: number): void {
    const u = this.get(key);
    if (u && isPaced(u, now, pace, slowStartMs)) takeToken(u, now, pace);
  }

  /** Records the upstream's version; true when it changed. */
  setVersion(key: string, version: KubeMinor | undefined): boolean {
    const u = this.get(key);
    if (!u || (u.version?.major === version?.major && u.version?.minor === version?.minor)) return false;
    u.version = version;
    return true;
  }

  release(key: string): void {
    const u = this.get(key);
    if (u && u.active > 0) u.active--;
  }

  /** At least one upstream is up and not drained. */
  hasHealthy(): boolean {
    return this.#upstreams.some((u) => u.state === 'up' && !u.drained);
  }
}

/** Came back: slow start begins and the pacing bucket is full. */
function startRecovery(u: Upstream, now: number): void {
  u.slowStartFrom = now;
  refillBucket(u);
}

function newUpstream(key: string, local: boolean, joined: boolean): Upstream {
  return {
    key,
    local,
    backup: false,
    state: 'unknown',
    drained: false,
    score: 0,
    latencyMs: undefined,
    lastUpAt: undefined,
    active: 0,
    evicted: false,
    slowStartFrom: undefined,
    version: undefined,
    paceTokens: undefined,
    paceAt: undefined,
    joined,
    lastCheck: undefined,
    transitions: [],
  };
}

function moveTo(u: Upstream, to: UpstreamState, cause: TransitionCause, evidence: ProbeResult, now: number): Transition {
  const detail = `${evidence.detail}${evidence.latencyMs ? ` (${evidence.latencyMs} ms)` : ''}`;
  const t: Transition = { at: now, from: u.state, to, cause, reason: evidence.reason, detail };
  u.state = to;
  u.transitions = [t, ...u.transitions].slice(0, TRANSITIONS_KEPT);
  return t;
}
