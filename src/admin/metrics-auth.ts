// Authenticated scrapes for the metrics listener: a bearer token checked against the apiserver
// (decide-metrics-access.ts), with a short cache keyed by the token's SHA-256 so a scrape every
// 15 s costs the apiserver two reviews a minute per scraper at most. The token itself is never kept,
// logged or echoed. An apiserver that cannot be asked is a local fault: 503, not cached.
import { createHash } from 'node:crypto';
import type { Clock } from '../base/clock.ts';
import { describeError } from '../base/errors.ts';
import {
  bearerToken,
  cacheTtlMs,
  decideAuthentication,
  decideAuthorization,
  type AccessReviewStatus,
  type MetricsAccess,
  type ReviewedUser,
  type TokenReviewStatus,
} from './decide-metrics-access.ts';

export interface TokenReviewer {
  reviewToken(token: string): Promise<TokenReviewStatus>;
  reviewAccess(user: ReviewedUser, path: string, verb: string): Promise<AccessReviewStatus>;
}

export type ScrapeVerdict = MetricsAccess | { status: 503; reason: string };

export interface MetricsAuthOptions {
  reviewer: TokenReviewer;
  clock: Clock;
  /** Default 60 s for an allowed token, 10 s for a refused one. */
  allowedTtlMs?: number;
  deniedTtlMs?: number;
  /** Most cached verdicts (the oldest goes first). */
  maxEntries?: number;
}

export class MetricsAuth {
  readonly #opts: Required<MetricsAuthOptions>;
  readonly #cache = new Map<string, { access: MetricsAccess; until: number }>();
  /** Reviews asked of the apiserver (tests and the metric). */
  reviews = 0;

  constructor(opts: MetricsAuthOptions) {
    this.#opts = { allowedTtlMs: 60_000, deniedTtlMs: 10_000, maxEntries: 256, ...opts };
  }

  async check(authorization: string | undefined, path: string): Promise<ScrapeVerdict> {
    const token = bearerToken(authorization);
    if (token === undefined) return { status: 401, reason: 'no bearer token; send "Authorization: Bearer <service account token>"' };
    const key = createHash('sha256').update(token).update('\0').update(path).digest('base64');
    const now = this.#opts.clock.now();
    const hit = this.#cache.get(key);
    if (hit && hit.until > now) return hit.access;
    let access: MetricsAccess;
    try {
      this.reviews++;
      const authn = decideAuthentication(await this.#opts.reviewer.reviewToken(token));
      access = authn.ok ? decideAuthorization(authn.user, await this.#opts.reviewer.reviewAccess(authn.user, path, 'get'), path) : authn.access;
    } catch (err) {
      return { status: 503, reason: `cannot check the token with the apiserver (${describeError(err)})` };
    }
    this.#cache.delete(key);
    this.#cache.set(key, { access, until: now + cacheTtlMs(access, { allowedMs: this.#opts.allowedTtlMs, deniedMs: this.#opts.deniedTtlMs }) });
    while (this.#cache.size > this.#opts.maxEntries) this.#cache.delete(this.#cache.keys().next().value!);
    return access;
  }
}
