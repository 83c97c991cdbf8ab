// Faults the emulator injects per endpoint: added latency, an error status (in the service's own body
// shape), a 200 with a body of the test's choosing, or a hang (the request is accepted and never answered), optionally for the next N calls only.
import type { ServiceName } from './http-kit.ts';

export interface FaultSpec {
  /** Every service when absent. */
  service?: ServiceName;
  /** Every method when absent. */
  method?: string;
  /** A regular expression on the path below the service's version prefix, e.g. "^/servers/detail". */
  path?: string;
  /** Delay before answering (combined with status or a normal answer). */
  latencyMs?: number;
  /** Answer with this status and an error body instead of handling the request. */
  status?: number;
  /** Error message for status (a generic one otherwise). */
  message?: string;
  /** Error type for status (NeutronError.type, Nova fault key, Keystone title, Octavia faultcode). */
  type?: string;
  /**
   * Answer with this exact body text instead of handling the request (status from `status`, 200 when
   * absent): an HTML maintenance page, `{}`, a renamed key, a page whose next link never advances.
   */
  body?: string;
  /** Content type of `body` (application/json when absent). */
  contentType?: string;
  /** Never answer; the connection stays open until the client gives up or the emulator closes. */
  hang?: boolean;
  /** Apply to the next N matching requests only; forever when absent. */
  times?: number;
  /**
   * Another writer: right after the matching request is answered (before the client can send its
   * next one), this change lands on the router's routes as a separate full-list write would (the
   * revision moves on). Lets a test put a concurrent removal or add between a client's read and its write.
   */
  routeWriteAfter?: ConcurrentRouteWrite;
}

export interface ConcurrentRouteWrite {
  routerId: string;
  remove?: { destination: string; nexthop: string }[];
  add?: { destination: string; nexthop: string }[];
}

export interface FaultRule extends FaultSpec {
  id: string;
  /** Requests this rule has been applied to. */
  hits: number;
}

export class FaultInjector {
  #rules: FaultRule[] = [];
  #next = 1;

  add(spec: FaultSpec): FaultRule {
    if (spec.path !== undefined) new RegExp(spec.path); // fail here, not on the next request
    const rule: FaultRule = { ...spec, id: `fault-${this.#next++}`, hits: 0 };
    this.#rules.push(rule);
    return rule;
  }

  remove(id: string): boolean {
    const before = this.#rules.length;
    this.#rules = this.#rules.filter((r) => r.id !== id);
    return this.#rules.length < before;
  }

  clear(): void {
    this.#rules = [];
  }

  list(): FaultRule[] {
    return this.#rules.map((r) => ({ ...r }));
  }

  /** The first rule matching the request (consuming one of its `times`), or undefined. */
  take(service: ServiceName, method: string, path: string): FaultRule | undefined {
    const rule = this.#rules.find(
      (r) =>
        (r.service === undefined || r.service === service) &&
        (r.method === undefined || r.method.toUpperCase() === method) &&
        (r.path === undefined || new RegExp(r.path).test(path)),
    );
    if (!rule) return undefined;
    rule.hits++;
    if (rule.times !== undefined && rule.hits >= rule.times) this.remove(rule.id);
    return { ...rule };
  }
}
