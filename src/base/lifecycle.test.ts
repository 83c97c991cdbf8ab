import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Shutdown, once, untilSignal } from './lifecycle.ts';
import { createSilentLogger } from './logger.ts';

test('shutdown runs its steps once, in order, and later callers join the same run', async () => {
  const order: string[] = [];
  const sd = new Shutdown(createSilentLogger());
  sd.add('stop listening', () => {
    order.push('listen');
  });
  sd.add('write down files', async () => {
    order.push('files');
  });
  const a = sd.run('SIGTERM');
  const b = sd.run('SIGINT');
  assert.equal(a, b);
  await a;
  assert.deepEqual(order, ['listen', 'files']);
});

test('a failing or hanging step does not stop the steps after it', async () => {
  const order: string[] = [];
  const sd = new Shutdown(createSilentLogger());
  sd.add('fails', () => {
    throw new Error('boom');
  });
  sd.add('hangs', () => new Promise<void>(() => {}), 30);
  sd.add('last', () => {
    order.push('last');
  });
  await sd.run('test');
  assert.deepEqual(order, ['last']);
});

test('once() runs the wrapped function a single time', async () => {
  let calls = 0;
  const close = once(async () => {
    calls++;
  });
  await Promise.all([close(), close()]);
  await close();
  assert.equal(calls, 1);
});

/** A process stand-in with exitOnSignals on it, and a shutdown whose one step waits for release(). */
async function signalRig() {
  const { EventEmitter } = await import('node:events');
  const { exitOnSignals } = await import('./lifecycle.ts');
  const exits: number[] = [];
  const proc = Object.assign(new EventEmitter(), { exit: (code: number) => void exits.push(code), exitCode: undefined });
  const sd = new Shutdown(createSilentLogger());
  let resolveStep: (() => void) | undefined;
  sd.add('slow', () => new Promise<void>((r) => (resolveStep = r)));
  exitOnSignals(sd, createSilentLogger(), proc as unknown as NodeJS.Process);
  /** Ends the step once the shutdown has reached it. */
  const release = async () => {
    while (!resolveStep) await new Promise((r) => setImmediate(r));
    resolveStep();
  };
  return { proc, exits, sd, release };
}

test('the first signal runs the shutdown; a second one during it forces exit 1', async () => {
  const { proc, exits, sd, release } = await signalRig();
  proc.emit('SIGTERM', 'SIGTERM');
  assert.equal(sd.started, true);
  proc.emit('SIGINT', 'SIGINT');
  assert.deepEqual(exits, [1]);
  await release();
  assert.equal(await sd.finished, 'received SIGTERM');
});

test('a shutdown begun by something else (a listener hand-over) is joined by the first signal, not cut short', async () => {
  const { proc, exits, sd, release } = await signalRig();
  void sd.run('listeners handed over to a successor');
  proc.emit('SIGTERM', 'SIGTERM');
  assert.deepEqual(exits, [], 'the first signal joins');
  proc.emit('SIGTERM', 'SIGTERM');
  assert.deepEqual(exits, [1], 'a second one forces the exit');
  await release();
  assert.equal(await sd.finished, 'listeners handed over to a successor');
});

test('untilSignal resolves at the first SIGTERM or SIGINT and then stops listening', async () => {
  const { EventEmitter } = await import('node:events');
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const proc = new EventEmitter() as unknown as NodeJS.Process;
    let got: NodeJS.Signals | undefined;
    const waiting = untilSignal(proc).then((s) => (got = s));
    await new Promise((r) => setImmediate(r));
    assert.equal(got, undefined, 'nothing before the signal');
    proc.emit(signal, signal);
    await waiting;
    assert.equal(got, signal);
    assert.equal(proc.listenerCount('SIGTERM') + proc.listenerCount('SIGINT'), 0, 'no listener left behind');
  }
});
