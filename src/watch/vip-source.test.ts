import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../base/clock.ts';
import { createSilentLogger } from '../base/logger.ts';
import { mergeVips, VipSource } from './vip-source.ts';

function source(answers: (string[] | Error)[], staticVips: string[] = []) {
  const clock = new ManualClock();
  const changes: string[][] = [];
  let calls = 0;
  const src = new VipSource({
    staticVips,
    dnsHost: 'api-int.example',
    refreshMs: 60_000,
    clock,
    log: createSilentLogger(),
    resolve: async () => {
      const a = answers[Math.min(calls++, answers.length - 1)]!;
      if (a instanceof Error) throw a;
      return a;
    },
    onChange: (v) => changes.push([...v]),
  });
  return { src, clock, changes, calls: () => calls };
}

const tick = async (clock: ManualClock, ms: number) => {
  clock.advance(ms);
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

test('every A and AAAA record is a VIP, in canonical form, after the static ones', async () => {
  const { src } = source([['10.0.0.2', 'FD00::0:2']], ['10.0.0.1']);
  assert.equal(await src.start(), undefined);
  assert.deepEqual(src.current, ['10.0.0.1', '10.0.0.2', 'fd00::2']);
  src.close();
});

test('a failed or empty lookup keeps the last good set and reports the error', async () => {
  const { src, clock, changes } = source([['10.0.0.2'], new Error('EAI_AGAIN'), [], ['10.0.0.3']]);
  await src.start();
  await tick(clock, 60_000);
  assert.deepEqual(src.current, ['10.0.0.2']);
  assert.match(src.lastDnsError!, /EAI_AGAIN/);
  await tick(clock, 60_000);
  assert.deepEqual(src.current, ['10.0.0.2']);
  assert.deepEqual(changes, []);
  await tick(clock, 60_000);
  assert.deepEqual(src.current, ['10.0.0.3']);
  assert.deepEqual(changes, [['10.0.0.3']]);
  assert.equal(src.lastDnsError, undefined);
  src.close();
});

test('a first lookup that fails is returned to the caller to decide', async () => {
  const { src } = source([new Error('ENOTFOUND')]);
  assert.match((await src.start())!, /ENOTFOUND/);
  assert.deepEqual(src.current, []);
  src.close();
});

test('merging drops duplicates between static and DNS VIPs', () => {
  assert.deepEqual(mergeVips(['10.0.0.1'], ['10.0.0.9', '10.0.0.1']), ['10.0.0.1', '10.0.0.9']);
});
