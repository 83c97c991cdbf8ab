import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyProbe, initialTracker, type HysteresisOptions, type Tracker } from './hysteresis.ts';
import type { ProbeReason, ProbeResult } from '../probe/probe-result.ts';

const ok: ProbeResult = { ok: true, status: 200, latencyMs: 1, reason: 'ok', detail: 'HTTP 200' };
const fail = (reason: ProbeReason): ProbeResult => ({ ok: false, status: reason === 'http-status' ? 503 : 0, latencyMs: 1, reason, detail: reason });
const opts: HysteresisOptions = { rise: 2, fall: 3, fastDownOnRefused: true };

function feed(results: ProbeResult[], o = opts, start: Tracker = initialTracker) {
  let t = start;
  const transitions: string[] = [];
  for (const r of results) {
    const next = applyProbe(t, r, o);
    t = next.tracker;
    if (next.transition) transitions.push(`${next.transition.from}->${next.transition.to}`);
  }
  return { state: t.state, transitions };
}

test('the state stays unknown until a threshold is reached', () => {
  assert.deepEqual(feed([ok]), { state: 'unknown', transitions: [] });
  assert.deepEqual(feed([fail('timeout'), fail('timeout')]), { state: 'unknown', transitions: [] });
});

test('rise consecutive successes declare up, and the count restarts after a failure', () => {
  assert.deepEqual(feed([ok, ok]), { state: 'up', transitions: ['unknown->up'] });
  assert.deepEqual(feed([ok, fail('timeout'), ok]).state, 'unknown');
});

test('fall consecutive failures declare down; a success in between resets the count', () => {
  const up = { state: 'up' as const, successes: 5, failures: 0 };
  assert.deepEqual(feed([fail('http-status'), fail('http-status'), fail('http-status')], opts, up), { state: 'down', transitions: ['up->down'] });
  assert.deepEqual(feed([fail('timeout'), fail('timeout'), ok, fail('timeout'), fail('timeout')], opts, up).state, 'up');
});

test('a refused connection declares down at once; a 503 goes through the count', () => {
  const up = { state: 'up' as const, successes: 5, failures: 0 };
  assert.deepEqual(feed([fail('refused')], opts, up), { state: 'down', transitions: ['up->down'] });
  assert.deepEqual(feed([fail('http-status')], opts, up).state, 'up');
  assert.deepEqual(feed([fail('refused')], { ...opts, fastDownOnRefused: false }, up).state, 'up');
});

test('repeated results in the same state make no new transition', () => {
  assert.deepEqual(feed([ok, ok, ok, ok]).transitions, ['unknown->up']);
  const down = { state: 'down' as const, successes: 0, failures: 9 };
  assert.deepEqual(feed([fail('refused'), fail('timeout')], opts, down).transitions, []);
});

test('the transition reason carries the evidence', () => {
  const up = { state: 'up' as const, successes: 1, failures: 2 };
  const { transition } = applyProbe(up, fail('timeout'), opts);
  assert.match(transition!.reason, /3 consecutive failed probes \(last: timeout/);
});

test('a local fault is neither a success nor a failure: counts and state stay', () => {
  const local = { ok: false, status: 0, latencyMs: 0, reason: 'local' as const, detail: 'cannot read token file' };
  const opts = { rise: 1, fall: 2, fastDownOnRefused: true };
  const up = { state: 'up' as const, successes: 3, failures: 0 };
  for (let i = 0; i < 10; i++) assert.deepEqual(applyProbe(up, local, opts), { tracker: up });
  const failing = { state: 'up' as const, successes: 0, failures: 1 };
  assert.deepEqual(applyProbe(failing, local, opts), { tracker: failing });
});
