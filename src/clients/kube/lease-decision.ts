// Pure rules of Lease-based leader election (as client-go's leaderelection): who may take the lease
// and when. Expiry is judged by the local time at which the current record was first observed, not by
// the renewTime written by the holder, so clock skew between replicas cannot cause two leaders.
import type { Lease } from './kube-types.ts';

export type LeaseDecision =
  { kind: 'create' } | { kind: 'renew' } | { kind: 'take-over'; previousHolder: string | undefined } | { kind: 'wait'; holder: string; expiresInMs: number };

export interface ObservedRecord {
  /** holderIdentity + renewTime as last seen: a change means the holder is alive. */
  fingerprint: string;
  /** Local clock when that record was first seen. */
  observedAtMs: number;
}

export function leaseFingerprint(lease: Lease): string {
  return `${lease.spec.holderIdentity ?? ''}|${lease.spec.renewTime ?? ''}|${lease.spec.leaseDurationSeconds ?? ''}`;
}

/** Updates the observation: same record keeps its first-seen time, a new record starts now. */
export function observeLease(prev: ObservedRecord | undefined, lease: Lease, nowMs: number): ObservedRecord {
  const fp = leaseFingerprint(lease);
  return prev && prev.fingerprint === fp ? prev : { fingerprint: fp, observedAtMs: nowMs };
}

export function decideLease(lease: Lease | undefined, observed: ObservedRecord | undefined, identity: string, nowMs: number): LeaseDecision {
  if (!lease) return { kind: 'create' };
  const holder = lease.spec.holderIdentity || undefined;
  if (holder === identity) return { kind: 'renew' };
  if (holder === undefined) return { kind: 'take-over', previousHolder: undefined };
  const durationMs = (lease.spec.leaseDurationSeconds ?? 15) * 1000;
  const since = observed?.observedAtMs ?? nowMs;
  const expiresInMs = since + durationMs - nowMs;
  if (expiresInMs <= 0) return { kind: 'take-over', previousHolder: holder };
  return { kind: 'wait', holder, expiresInMs };
}

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
