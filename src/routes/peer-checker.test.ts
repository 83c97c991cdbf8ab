import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../base/clock.ts';
import { createSilentLogger } from '../base/logger.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { failedProbe, type ProbeResult } from '../probe/probe-result.ts';
import { PeerChecker } from './peer-checker.ts';

const ok: ProbeResult = { ok: true, status: 200, latencyMs: 1, reason: 'ok', detail: '200 OK' };

test('a peer is healthy after one passing check and dropped after one failing check; changes wake the rules', async (t) => {
  const clock = new ManualClock(0);
  const answers = new Map<string, ProbeResult>([
    ['10.0.2.12', failedProbe('http-status', 1, '503')],
    ['10.0.3.13', ok],
  ]);
  const probed: string[] = [];
  let changes = 0;
  const checker = new PeerChecker({
    peers: ['10.0.2.12', '10.0.3.13'],
    port: 6443,
    check: 'readyz',
    intervalMs: 1000,
    clock,
    log: createSilentLogger(),
    onChange: () => changes++,
    probe: async (peer) => (probed.push(peer), answers.get(peer)!),
  });
  t.after(() => checker.close());
  assert.deepEqual(checker.healthy(), [], 'nothing is healthy before its first check');
  await checker.start();
  assert.deepEqual(checker.healthy(), ['10.0.3.13'], 'known after start');
  assert.equal(changes, 1);
  answers.set('10.0.2.12', ok);
  clock.advance(1000);
  await waitFor(() => checker.healthy().length === 2, { what: 'first peer passes' });
  assert.deepEqual(checker.healthy(), ['10.0.2.12', '10.0.3.13'], 'configured order');
  answers.set('10.0.2.12', failedProbe('timeout', 1000, 'no answer'));
  clock.advance(1000);
  await waitFor(() => checker.healthy().length === 1, { what: 'one failing check drops it' });
  assert.equal(changes, 3);
  assert.equal(probed.length, 6, 'one probe per peer per round');
});
