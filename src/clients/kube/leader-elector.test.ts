import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../base/clock.ts';
import { createSilentLogger } from '../../base/logger.ts';
import { LeaderElector } from './leader-elector.ts';
import type { Lease } from './kube-types.ts';
import type { CallOptions, ResourceClient } from './resource-client.ts';

/** A Lease store whose calls can be told to hang until their signal aborts; records each call's bounds. */
class FakeLeases {
  lease: Lease | undefined;
  hang = false;
  calls: { op: string; timeoutMs?: number; signal?: AbortSignal }[] = [];
  #rv = 0;

  #call<T>(op: string, call: CallOptions, answer: () => T): Promise<T> {
    this.calls.push({ op, ...call });
    if (!this.hang) return Promise.resolve(answer());
    return new Promise((_, reject) => call.signal?.addEventListener('abort', () => reject(call.signal!.reason), { once: true }));
  }

  get = (_ns: string | undefined, _name: string, call: CallOptions = {}) =>
    this.#call('get', call, () => {
      if (!this.lease) throw Object.assign(new Error('not found'), { status: 404 });
      return structuredClone(this.lease);
    });

  create = (obj: Lease, call: CallOptions = {}) =>
    this.#call('create', call, () => (this.lease = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.#rv) } }));
  replace = (obj: Lease, call: CallOptions = {}) =>
    this.#call('replace', call, () => (this.lease = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.#rv) } }));
}

const flush = () => new Promise((r) => setImmediate(r));

test('a leader whose lease calls hang steps down at the renew deadline, the fence falls at that instant, and the hung call is cut', async () => {
  const clock = new ManualClock(1_000_000);
  const leases = new FakeLeases();
  const log: string[] = [];
  const el = new LeaderElector({
    leases: leases as unknown as ResourceClient<Lease>,
    namespace: 'ns',
    name: 'op',
    identity: 'a',
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    clock,
    log: createSilentLogger(),
    onStartedLeading: () => log.push(`start@${clock.now()}`),
    onStoppedLeading: () => log.push(`stop@${clock.now()}`),
  });
  // isNotFound looks at KubeApiError; a plain create path is enough here, so start with a lease of ours.
  leases.lease = { metadata: { name: 'op', namespace: 'ns', resourceVersion: '1' }, spec: { holderIdentity: null } } as Lease;
  el.start();
  for (let i = 0; i < 20 && !el.isLeader; i++) await flush();
  assert.equal(el.isLeader, true);
  const t0 = clock.now();
  const fence = el.fence;
  assert.equal(fence.aborted, false);

  leases.hang = true;
  clock.advance(2_200); // the next renew (retry period ±10 %): it hangs
  for (let i = 0; i < 20; i++) await flush();
  const hung = leases.calls.at(-1)!;
  assert.equal(hung.op, 'get');
  assert.ok(hung.timeoutMs! <= 7_800, `the call is bounded by what is left of the deadline (${hung.timeoutMs} ms), not 30 s`);
  assert.equal(hung.signal?.aborted, false);

  clock.advance(7_799);
  for (let i = 0; i < 20; i++) await flush();
  assert.equal(el.isLeader, true, 'still inside the deadline');
  assert.equal(fence.aborted, false);

  clock.advance(1); // t0 + 10 s: the deadline
  assert.equal(el.isLeader, false, 'isLeader is false at the deadline even before any timer ran');
  for (let i = 0; i < 20; i++) await flush();
  assert.equal(fence.aborted, true, 'the fence fell at the deadline');
  assert.equal(hung.signal?.aborted, true, 'the hung lease call was aborted, not left to the client timeout');
  assert.deepEqual(log, [`start@${t0}`, `stop@${t0 + 10_000}`]);
  assert.equal(el.fence.aborted, true, 'a replica that does not lead gets an aborted fence');
  await el.close({ release: false });
});

test('close() drops the fence before it releases the lease', async () => {
  const clock = new ManualClock(0);
  const leases = new FakeLeases();
  leases.lease = { metadata: { name: 'op', namespace: 'ns', resourceVersion: '1' }, spec: { holderIdentity: null } } as Lease;
  let fenceAtRelease: boolean | undefined;
  const el = new LeaderElector({
    leases: leases as unknown as ResourceClient<Lease>,
    namespace: 'ns',
    name: 'op',
    identity: 'a',
    clock,
    log: createSilentLogger(),
    onStartedLeading: () => undefined,
    onStoppedLeading: () => undefined,
  });
  el.start();
  for (let i = 0; i < 20 && !el.isLeader; i++) await flush();
  const fence = el.fence;
  const replace = leases.replace;
  leases.replace = (obj, call) => {
    if (obj.spec.holderIdentity === null) fenceAtRelease = fence.aborted;
    return replace(obj, call);
  };
  await el.close();
  assert.equal(fenceAtRelease, true);
  assert.equal(leases.lease?.spec.holderIdentity, null, 'released');
});
