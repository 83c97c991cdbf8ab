import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderSummary, renderTable, type DemoSnapshot } from './demo-table.ts';
import { demoScenario, expectsEjection } from './demo-scenario.ts';

const snap: DemoSnapshot = {
  elapsedMs: 5000,
  durationMs: 40_000,
  upstreams: [{ name: 'apiserver-1', address: '127.0.0.1:1', proxyState: 'down', active: 0, total: 9, truth: 'killed' }],
  load: { sent: 10, ok: 9, failed: 1, lastError: 'ECONNRESET', watchesOpen: 3, watchReconnects: 1 },
  watcher: { target: 'apiserver-1', state: 'down', reason: 'connection refused', files: ['192.0.2.10.down'] },
  events: [
    { atMs: 4800, says: 'apiserver-1 is killed', timed: true, happened: true, ejectedAfterMs: 120 },
    { atMs: 12_000, says: 'apiserver-2 starts a graceful shutdown', timed: true, happened: false },
  ],
};

test('the table shows what the proxy believes beside what is true, and the events so far', () => {
  const text = renderTable(snap, false);
  assert.match(text, /apiserver-1 +127\.0\.0\.1:1 +down +0 +9 +killed/);
  assert.match(text, /10 requests sent, 9 ok, 1 failed/);
  assert.match(text, /\* 4\.8s +apiserver-1 is killed {2}→ proxy stopped using it after 0\.1s/);
  assert.ok(!text.includes('\x1b['), 'no colour codes without colour');
  assert.ok(renderTable(snap, true).includes('\x1b[31mdown'), 'down in red');
});

test('the summary names every timed failure and whether it was taken out', () => {
  const text = renderSummary(snap);
  assert.match(text, /requests: 10 sent, 9 ok, 1 failed \(last error: ECONNRESET\)/);
  assert.match(text, /apiserver-1 is killed: taken out after 0\.1s/);
  assert.match(text, /apiserver-2 starts a graceful shutdown: not taken out/);
});

test('the scenario scales with the duration and times only the failures', () => {
  const ev = demoScenario(10_000);
  assert.ok(
    ev.every((e, i) => i === 0 || e.atMs >= ev[i - 1]!.atMs),
    'in time order',
  );
  assert.ok(ev.at(-1)!.atMs < 10_000 * 0.8, 'the last event leaves time to recover');
  assert.deepEqual(
    ev.filter((e) => expectsEjection(e.action)).map((e) => e.target),
    [0, 1, 2],
  );
});
