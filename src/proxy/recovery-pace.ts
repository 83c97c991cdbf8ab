// Recovery pacing: a token bucket on the new connections an upstream that just came back may take,
// on top of slow start. Slow start spreads a recovered apiserver's share of new connections, but
// when every client reconnects at once (the whole control plane came back, or this upstream is the
// only one usable) the share is all of them, at whatever rate they arrive: kubernetes#124502, a
// recovered apiserver flooded by reconnects and relists. Pure: the bucket lives on the upstream.
import { isSlowStarting } from './slow-start.ts';

/** The longest a client connection waits for a token in all; then it connects anyway. */
export const MAX_PACE_WAIT_MS = 5000;

export interface PaceConfig {
  /** New connections per second an upstream in its recovery window may take; 0 or less: off. */
  ratePerSec: number;
  /** Tokens the bucket holds when full: the connections it may take at once. */
  burst: number;
}

/** A bucket's state; absent fields mean full (the upstream has not been paced since it came back). */
export interface PaceBucket {
  paceTokens: number | undefined;
  paceAt: number | undefined;
}

/** Tokens available at `now` (ms). */
export function tokensAt(bucket: PaceBucket, now: number, pace: PaceConfig): number {
  if (bucket.paceTokens === undefined || bucket.paceAt === undefined) return pace.burst;
  return Math.min(pace.burst, bucket.paceTokens + (Math.max(0, now - bucket.paceAt) * pace.ratePerSec) / 1000);
}

/** Milliseconds until one token is available (0 when one is). */
export function msUntilToken(bucket: PaceBucket, now: number, pace: PaceConfig): number {
  const missing = 1 - tokensAt(bucket, now, pace);
  return missing <= 0 ? 0 : Math.ceil((missing * 1000) / pace.ratePerSec);
}

/** Takes one token (the caller checked there is one, or is overriding the pace); may go below zero. */
export function takeToken(bucket: PaceBucket, now: number, pace: PaceConfig): void {
  bucket.paceTokens = tokensAt(bucket, now, pace) - 1;
  bucket.paceAt = now;
}

/** Pacing applies while the upstream is in its slow-start window and pacing is on. */
export function isPaced(u: { slowStartFrom: number | undefined }, now: number, pace: PaceConfig | undefined, slowStartMs: number): boolean {
  return pace !== undefined && pace.ratePerSec > 0 && isSlowStarting(u.slowStartFrom, now, slowStartMs);
}

/** Empties the bucket's record: full again (at a recovery). */
export function refillBucket(bucket: PaceBucket): void {
  bucket.paceTokens = undefined;
  bucket.paceAt = undefined;
}
