import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideLease, microTime, observeLease } from './lease-decision.ts';
import type { Lease } from './kube-types.ts';

function lease(holder: string | null, renewTime = '2024-01-01T00:00:00.000000Z', seconds = 15): Lease {
  return { metadata: { name: 'l', namespace: 'ns' }, spec: { holderIdentity: holder, renewTime, leaseDurationSeconds: seconds } };
}

test('lease decisions follow the holder, the observation time and the lease duration', () => {
  const cases: { name: string; lease?: Lease; observedAt?: number; now: number; want: string }[] = [
    { name: 'no lease yet: create it', now: 0, want: 'create' },
    { name: 'we hold it: renew', lease: lease('me'), observedAt: 0, now: 100_000, want: 'renew' },
    { name: 'released (empty holder): take over at once', lease: lease(null), observedAt: 0, now: 1, want: 'take-over' },
    { name: 'another holder seen 5 s ago: wait', lease: lease('other'), observedAt: 10_000, now: 15_000, want: 'wait' },
    { name: 'another holder unchanged for the full duration: take over', lease: lease('other'), observedAt: 10_000, now: 25_000, want: 'take-over' },
    { name: 'a longer lease duration is honoured', lease: lease('other', undefined, 60), observedAt: 0, now: 30_000, want: 'wait' },
  ];
  for (const c of cases) {
    const observed = c.lease && c.observedAt !== undefined ? observeLease(undefined, c.lease, c.observedAt) : undefined;
    assert.equal(decideLease(c.lease, observed, 'me', c.now).kind, c.want, c.name);
  }
});

test('an unchanged record keeps its first observation time and a renewal resets it', () => {
  const first = observeLease(undefined, lease('other', 'a'), 1000);
  assert.equal(observeLease(first, lease('other', 'a'), 9000).observedAtMs, 1000);
  assert.equal(observeLease(first, lease('other', 'b'), 9000).observedAtMs, 9000);
});

test('a waiting candidate is told how long the lease has left', () => {
  const l = lease('other');
  const d = decideLease(l, observeLease(undefined, l, 0), 'me', 4000);
  assert.deepEqual(d, { kind: 'wait', holder: 'other', expiresInMs: 11_000 });
});

test('micro times carry six fractional digits as the API expects', () => {
  assert.equal(microTime(Date.UTC(2024, 0, 2, 3, 4, 5, 678)), '2024-01-02T03:04:05.678000Z');
});
