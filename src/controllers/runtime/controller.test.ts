import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '../../admin/metrics.ts';
import { ManualClock } from '../../base/clock.ts';
import { createSilentLogger } from '../../base/logger.ts';
import { waitFor } from '../../../testkit/wait-for.ts';
import { Controller, type Reconciler } from './controller.ts';
import { createControllerMetrics } from './controller-metrics.ts';

function setup(reconcile: Reconciler, extra: { resyncMs?: number; listKeys?: () => string[] } = {}) {
  const clock = new ManualClock(0);
  const registry = new Registry();
  const c = new Controller({
    name: 'test',
    reconcile,
    clock,
    log: createSilentLogger(),
    metrics: createControllerMetrics(registry),
    workers: 3,
    backoff: { baseMs: 1000, maxMs: 8000 },
    ...extra,
  });
  return { c, clock, registry };
}

test('one reconcile is in flight per key even with several workers', async (t) => {
  let inFlight = 0;
  let maxInFlight = 0;
  let runs = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const { c } = setup(async () => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    runs++;
    await gate;
    inFlight--;
  });
  c.start();
  t.after(() => c.close());
  c.enqueue('k');
  await waitFor(() => runs === 1);
  c.enqueue('k');
  c.enqueue('k');
  release();
  await waitFor(() => runs === 2 && c.idle, { what: 'the dirty key to run once more' });
  assert.equal(maxInFlight, 1);
  assert.equal(runs, 2);
});

test('a failing key is retried after a growing backoff, and requeueAfter schedules the next look', async (t) => {
  const times: number[] = [];
  let fail = 2;
  const { c, clock, registry } = setup(async () => {
    times.push(clock.now());
    if (fail-- > 0) throw new Error('boom');
    return { requeueAfterMs: 15_000 };
  });
  c.start();
  t.after(() => c.close());
  c.enqueue('k');
  await waitFor(() => times.length === 1 && c.idle);
  clock.advance(1000);
  await waitFor(() => times.length === 2 && c.idle);
  clock.advance(1999);
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(times.length, 2, 'second retry waits twice as long');
  clock.advance(1);
  await waitFor(() => times.length === 3 && c.idle);
  clock.advance(15_000);
  await waitFor(() => times.length === 4);
  assert.deepEqual(times, [0, 1000, 3000, 18_000]);
  const text = await registry.metrics();
  assert.match(text, /kubeward_controller_reconciles_total\{controller="test",result="error"\} 2/);
  assert.match(text, /kubeward_controller_reconcile_errors_total\{controller="test"\} 2/);
  assert.equal(c.status().errors, 2);
});

test('the periodic resync re-adds every key', async (t) => {
  const seen: string[] = [];
  const { c, clock } = setup(
    async (key) => {
      seen.push(key);
    },
    { resyncMs: 60_000, listKeys: () => ['a', 'b'] },
  );
  c.start();
  t.after(() => c.close());
  clock.advance(70_000);
  await waitFor(() => seen.length === 2);
  assert.deepEqual(seen.sort(), ['a', 'b']);
});

/** One worker whose run holds it at most a 5 s slot, on the given clock (the slot tests). */
function oneWorkerWithSlot(name: string, clock: ManualClock, reconcile: Reconciler): Controller {
  return new Controller({
    name,
    clock,
    log: createSilentLogger(),
    metrics: createControllerMetrics(new Registry()),
    workers: 1,
    slotTimeoutMs: 5000,
    reconcile,
  });
}

test('a reconcile past its slot frees its worker; its key stays busy until it returns', async (t) => {
  const clock = new ManualClock(0);
  const started: string[] = [];
  let release!: () => void;
  const hung = new Promise<void>((r) => (release = r));
  const c = oneWorkerWithSlot('slots', clock, async (key) => {
    started.push(key);
    if (key === 'hung') await hung;
  });
  c.start();
  t.after(async () => {
    release();
    await c.close();
  });
  c.enqueue('hung');
  await waitFor(() => started.length === 1);
  c.enqueue('ok');
  c.enqueue('hung');
  // One worker, held by the hung key: nothing else runs until its slot is over.
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(started, ['hung']);
  clock.advance(5000);
  await waitFor(() => started.length === 2, { what: 'the other key to get the freed worker' });
  assert.deepEqual(started, ['hung', 'ok']);
  // The hung key was added again while busy: it runs once more only after its first run returned.
  await new Promise((r) => setImmediate(r));
  assert.equal(started.filter((k) => k === 'hung').length, 1);
  release();
  await waitFor(() => started.length === 3 && c.idle, { what: 'the hung key to run again once it returned' });
  assert.deepEqual(started, ['hung', 'ok', 'hung']);
});

test('workers follow workersFor, never below the least number', async (t) => {
  let wanted = 1;
  const c = new Controller({
    name: 'scale',
    clock: new ManualClock(0),
    log: createSilentLogger(),
    metrics: createControllerMetrics(new Registry()),
    workers: 2,
    workersFor: () => wanted,
    reconcile: async () => {},
  });
  c.start();
  t.after(() => c.close());
  assert.equal(c.workers, 2);
  wanted = 7;
  c.enqueue('a');
  assert.equal(c.workers, 7);
});

test('a reconcile that returns within its slot frees its worker at once, and its slot timer never fires', async (t) => {
  const clock = new ManualClock(0);
  const started: string[] = [];
  const c = oneWorkerWithSlot('slots-in-time', clock, async (key) => {
    started.push(key);
    if (key === 'fails') throw new Error('boom');
  });
  c.start();
  t.after(() => c.close());
  // One worker: each key runs only once the one before it has given the worker back, with no time passing.
  for (const k of ['a', 'fails', 'b', 'c']) c.enqueue(k);
  await waitFor(() => started.length === 4 && c.idle, { what: 'every key on the one worker without the clock moving' });
  assert.deepEqual(started, ['a', 'fails', 'b', 'c']);
  assert.equal(clock.now(), 0);
  // Past every slot: no worker is freed a second time (a stale timer would start a second worker's worth of runs).
  clock.advance(5000);
  await new Promise((r) => setImmediate(r));
  c.enqueue('d');
  c.enqueue('e');
  await waitFor(() => started.includes('e') && c.idle);
  assert.deepEqual(
    started.filter((k) => k === 'd' || k === 'e'),
    ['d', 'e'],
  );
  assert.equal(c.status().workers, 1);
});
