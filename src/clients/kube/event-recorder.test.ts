// The event recorder's aggregation: repeats within the window bump the existing Event; what it
// keeps for that is pruned by age, oldest first, also when entries were bumped out of order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../base/clock.ts';
import { createSilentLogger } from '../../base/logger.ts';
import { EventRecorder } from './event-recorder.ts';
import type { KubeEvent, KubeObject } from './kube-types.ts';
import type { ResourceClient } from './resource-client.ts';

function recorder(clock: ManualClock) {
  const calls: string[] = [];
  const events = {
    create: async (e: KubeEvent) => void calls.push(`create ${e.reason}`),
    patch: async (_ns: string, _name: string, body: { count: number }) => void calls.push(`patch ${body.count}`),
  } as unknown as ResourceClient<KubeEvent>;
  const r = new EventRecorder({ events, component: 'test', clock, log: createSilentLogger(), aggregateWindowMs: 1000 });
  return { r, calls };
}

const obj = (name: string): KubeObject => ({ metadata: { name, namespace: 't', uid: name } });

test('a repeat within the window patches the count; one after the window is a new Event', async () => {
  const clock = new ManualClock(0);
  const { r, calls } = recorder(clock);
  await r.record(obj('a'), 'Normal', 'R', 'm');
  clock.advance(500);
  await r.record(obj('a'), 'Normal', 'R', 'm');
  clock.advance(1500);
  await r.record(obj('a'), 'Normal', 'R', 'm');
  assert.deepEqual(calls, ['create R', 'patch 2', 'create R']);
});

test('entries older than the window are dropped, a recently bumped one is kept whatever its first time', async () => {
  const clock = new ManualClock(0);
  const { r } = recorder(clock);
  await r.record(obj('a'), 'Normal', 'R', 'm'); // t=0
  await r.record(obj('b'), 'Normal', 'R', 'm'); // t=0
  clock.advance(600);
  await r.record(obj('a'), 'Normal', 'R', 'm'); // a bumped at t=600, recorded before b
  assert.equal(r.recentCount, 2);
  clock.advance(500); // t=1100: b (0) is past the window, a (600) is not
  await r.record(obj('c'), 'Normal', 'R', 'm');
  assert.equal(r.recentCount, 2, 'b dropped; a and c kept');
  clock.advance(550); // t=1650: a (600) is past it, c (1100) is not
  await r.record(obj('d'), 'Normal', 'R', 'm');
  assert.equal(r.recentCount, 2, 'c and d kept');
});
