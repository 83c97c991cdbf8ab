// Start-up counts as a load: once the proxy serves, the process gives back what loading left in
// V8's heap and malloc's, and so it does once a load has passed, whatever the data path
// (docs/design/memory-after-load.md). As a process, the way it ships.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubewardProcess } from '../../testkit/kubeward-process.ts';
import { openGreeted, startUpstreams } from './proxy-fixtures.ts';

/** The shipped proxy to one upstream, tcp checks, no admin listener, logging at debug; `extra` adds flags. */
function debugProxy(upstreamPort: number, extra: readonly string[] = []): KubewardProcess {
  return new KubewardProcess([
    'proxy',
    '--listen',
    '127.0.0.1:0',
    '--upstream',
    `127.0.0.1:${upstreamPort}`,
    '--health-check',
    'tcp',
    '--admin-address',
    'off',
    ...extra,
    '--log-level',
    'debug',
  ]);
}

test('once the proxy serves, a collection and malloc_trim run once, logged at debug with what they gave back', async (t) => {
  const [up] = await startUpstreams(t, ['a']);
  const p = debugProxy(up!.address.port);
  t.after(() => p.stop());
  const listen = await p.listenPort();
  const given = await p.waitForLog(/^start-up done: memory given back$/);
  assert.ok(
    Number(given.heapAfter) > 0 && Number(given.heapAfter) <= Number(given.heapBefore),
    `the heap did not grow: ${given.heapBefore} -> ${given.heapAfter}`,
  );
  assert.equal(typeof given.mallocTrimmed, 'boolean', 'the addon is built for the tests (.ci/run builds it): malloc was trimmed');
  assert.ok(Number(given.ms) >= 0 && Number(given.ms) < 5000);
  const g = await openGreeted(listen);
  g.socket.destroy();
  assert.equal(g.upstream, 'a', 'serving');
  assert.equal(p.logs.filter((l) => l.msg === 'start-up done: memory given back').length, 1, 'once');
});

test('on --relay handle the give-back after a load trims malloc too: the process hands its addon to the proxy', async (t) => {
  const [up] = await startUpstreams(t, ['a']);
  const p = debugProxy(up!.address.port, ['--relay', 'handle']);
  t.after(() => p.stop());
  const listen = await p.listenPort();
  // A burst well over a quiet interval's count (plan-memory-trim.ts), then quiet: the next tick
  // after the busy one (ticks are 10 s apart) gives back.
  const burst = await Promise.all(Array.from({ length: 40 }, () => openGreeted(listen)));
  for (const g of burst) g.socket.destroy();
  const given = await p.waitForLog(/^the load has passed: memory given back$/, { timeoutMs: 30_000 });
  assert.equal(typeof given.mallocTrimmed, 'boolean', 'malloc_trim ran on the handle path (.ci/run builds the addon)');
});
