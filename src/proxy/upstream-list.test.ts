import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ProbeReason, ProbeResult } from '../probe/probe-result.ts';
import { UpstreamList, type UpstreamState } from './upstream-list.ts';

const ok: ProbeResult = { ok: true, status: 200, latencyMs: 2, reason: 'ok', detail: 'HTTP 200' };
const fail = (reason: ProbeReason): ProbeResult => ({ ok: false, status: reason === 'http-status' ? 503 : 0, latencyMs: 5, reason, detail: reason });
const members = [
  { key: 'a:1', local: false },
  { key: 'b:1', local: true },
];

type Step = ['check', ProbeResult] | ['connect', ProbeReason];

const cases: { name: string; steps: Step[]; state: UpstreamState; evictions: number }[] = [
  { name: 'the first success brings an unknown upstream up', steps: [['check', ok]], state: 'up', evictions: 0 },
  { name: 'the first failure takes an unknown upstream down, without evicting yet', steps: [['check', fail('timeout')]], state: 'down', evictions: 0 },
  {
    name: 'an up upstream survives fewer than fall failures',
    steps: [
      ['check', ok],
      ['check', fail('timeout')],
    ],
    state: 'up',
    evictions: 0,
  },
  {
    name: 'fall failures take it down and evict its connections once',
    steps: [
      ['check', ok],
      ['check', fail('timeout')],
      ['check', fail('timeout')],
      ['check', fail('refused')],
    ],
    state: 'down',
    evictions: 1,
  },
  {
    name: 'a success between failures resets the count',
    steps: [
      ['check', ok],
      ['check', fail('timeout')],
      ['check', ok],
      ['check', fail('timeout')],
    ],
    state: 'up',
    evictions: 0,
  },
  {
    name: 'not ready (503) takes it down but leaves its connections to the draining server',
    steps: [
      ['check', ok],
      ['check', fail('http-status')],
      ['check', fail('http-status')],
    ],
    state: 'down',
    evictions: 0,
  },
  {
    name: 'a not-ready upstream that then stops answering is evicted',
    steps: [
      ['check', ok],
      ['check', fail('http-status')],
      ['check', fail('http-status')],
      ['check', fail('refused')],
    ],
    state: 'down',
    evictions: 1,
  },
  {
    name: 'a refused check takes an up upstream down at once, without evicting yet',
    steps: [
      ['check', ok],
      ['check', fail('refused')],
    ],
    state: 'down',
    evictions: 0,
  },
  {
    name: 'a refused check followed by another failure evicts',
    steps: [
      ['check', ok],
      ['check', fail('refused')],
      ['check', fail('timeout')],
    ],
    state: 'down',
    evictions: 1,
  },
  {
    name: 'a refused connect takes an up upstream down at once',
    steps: [
      ['check', ok],
      ['check', ok],
      ['connect', 'refused'],
    ],
    state: 'down',
    evictions: 0,
  },
  {
    name: 'a refused connect and one failed check confirm it dead',
    steps: [
      ['check', ok],
      ['connect', 'refused'],
      ['check', fail('refused')],
    ],
    state: 'down',
    evictions: 1,
  },
  {
    name: 'a down upstream needs rise successes to come back',
    steps: [
      ['check', ok],
      ['connect', 'refused'],
      ['check', ok],
    ],
    state: 'down',
    evictions: 0,
  },
  {
    name: 'rise successes bring it back',
    steps: [
      ['check', ok],
      ['connect', 'refused'],
      ['check', ok],
      ['check', ok],
    ],
    state: 'up',
    evictions: 0,
  },
  {
    name: 'local faults in any number leave an up upstream up and its connections alone',
    steps: [
      ['check', ok],
      ['check', fail('local')],
      ['check', fail('local')],
      ['check', fail('local')],
      ['connect', 'local'],
    ],
    state: 'up',
    evictions: 0,
  },
  {
    name: 'local faults between failures neither count nor reset the count',
    steps: [
      ['check', ok],
      ['check', fail('timeout')],
      ['check', fail('local')],
      ['check', fail('timeout')],
    ],
    state: 'down',
    evictions: 1,
  },
  { name: 'a local fault does not decide an unknown upstream', steps: [['check', fail('local')]], state: 'unknown', evictions: 0 },
  {
    name: 'an upstream that died, came back and died again is evicted again',
    steps: [
      ['check', ok],
      ['check', fail('timeout')],
      ['check', fail('timeout')],
      ['check', ok],
      ['check', ok],
      ['check', fail('reset')],
      ['check', fail('reset')],
    ],
    state: 'down',
    evictions: 2,
  },
];

for (const c of cases) {
  test(c.name, () => {
    const list = new UpstreamList(members, { rise: 2, fall: 2 });
    let evictions = 0;
    let now = 0;
    for (const [kind, arg] of c.steps) {
      now += 1000;
      const ev = kind === 'check' ? list.recordCheck('a:1', arg, now) : list.recordConnectFailure('a:1', { reason: arg, detail: arg }, now);
      if (ev.evict) evictions++;
    }
    assert.equal(list.get('a:1')!.state, c.state);
    assert.equal(evictions, c.evictions);
    assert.equal(list.get('b:1')!.state, 'unknown', 'the other upstream is untouched');
  });
}

test('transitions keep the cause and the evidence, most recent first, bounded', () => {
  const list = new UpstreamList(members, { rise: 1, fall: 1 });
  list.recordCheck('a:1', ok, 1);
  list.recordConnectFailure('a:1', { reason: 'refused', detail: 'connect ECONNREFUSED' }, 2);
  for (let i = 0; i < 10; i++) {
    list.recordCheck('a:1', ok, 10 + 2 * i);
    list.recordCheck('a:1', fail('timeout'), 11 + 2 * i);
  }
  const u = list.get('a:1')!;
  assert.equal(u.transitions.length, 5);
  assert.deepEqual([u.transitions[0]!.to, u.transitions[0]!.cause, u.transitions[0]!.reason], ['down', 'check', 'timeout']);
  assert.equal(u.lastUpAt, 28);
});

test('reconcile keeps the state of upstreams that stay and starts new ones unknown', () => {
  const list = new UpstreamList(members, { rise: 2, fall: 2 });
  list.recordCheck('a:1', ok, 1);
  list.acquire('a:1');
  list.setDrained('b:1', true);
  const diff = list.reconcile([
    { key: 'a:1', local: false },
    { key: 'c:1', local: false },
  ]);
  assert.deepEqual(diff, { added: ['c:1'], removed: ['b:1'] });
  assert.deepEqual(
    list.all().map((u) => [u.key, u.state, u.active]),
    [
      ['a:1', 'up', 1],
      ['c:1', 'unknown', 0],
    ],
  );
  assert.equal(list.get('b:1'), undefined);
});

test('check latency is smoothed so that one slow answer does not flip the ranking', () => {
  const list = new UpstreamList(members, { rise: 1, fall: 1 });
  list.recordCheck('a:1', { ...ok, latencyMs: 1 }, 1);
  list.recordCheck('a:1', { ...ok, latencyMs: 11 }, 2);
  assert.equal(list.get('a:1')!.latencyMs, 4);
});

test('draining evicts once, undraining does not, and ready means some upstream is up and not drained', () => {
  const list = new UpstreamList(members, { rise: 1, fall: 1 });
  assert.equal(list.hasHealthy(), false);
  list.recordCheck('a:1', ok, 1);
  assert.equal(list.hasHealthy(), true);
  assert.deepEqual(list.setDrained('a:1', true), { evict: true });
  assert.deepEqual(list.setDrained('a:1', true), { evict: false });
  assert.equal(list.hasHealthy(), false);
  assert.deepEqual(list.setDrained('a:1', false), { evict: false });
  assert.equal(list.hasHealthy(), true);
  assert.equal(list.setDrained('nope:1', true), undefined);
});

test('active counts never go below zero', () => {
  const list = new UpstreamList(members, { rise: 1, fall: 1 });
  list.acquire('a:1');
  list.release('a:1');
  list.release('a:1');
  assert.equal(list.get('a:1')!.active, 0);
});

test('slow start begins when an upstream comes back, not when the pool first comes up', () => {
  const list = new UpstreamList(members, { rise: 1, fall: 1 });
  list.recordCheck('a:1', ok, 10);
  assert.equal(list.get('a:1')!.slowStartFrom, undefined, 'first up at start: nothing to protect it from');
  list.recordCheck('a:1', fail('refused'), 20);
  list.recordCheck('a:1', ok, 30);
  assert.equal(list.get('a:1')!.slowStartFrom, 30, 'down to up');
  list.reconcile([...members, { key: 'c:1', local: false }]);
  list.recordCheck('c:1', ok, 40);
  assert.equal(list.get('c:1')!.slowStartFrom, 40, 'joined a running pool');
  list.setDrained('b:1', true, 50);
  list.setDrained('b:1', false, 60);
  assert.equal(list.get('b:1')!.slowStartFrom, 60, 'undrained');
});

test('reconcile updates the backup and local flags of upstreams that stay', () => {
  const list = new UpstreamList([{ key: 'a:1', local: false, backup: true }], { rise: 1, fall: 1 });
  list.recordCheck('a:1', ok, 1);
  list.reconcile([{ key: 'a:1', local: false }]);
  assert.deepEqual([list.get('a:1')!.backup, list.get('a:1')!.state], [false, 'up']);
});
