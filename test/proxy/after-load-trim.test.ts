// The give-back after a load trims malloc on every data path: the trim is the process's (handed in
// as trimMalloc), not the native relay's, so a proxy on --relay handle or socket gives back what a
// burst of connections left in malloc as the native one does (docs/design/memory-after-load.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { once } from 'node:events';
import { waitFor } from '../../testkit/wait-for.ts';
import { QUIET_CONNECTIONS_PER_INTERVAL } from '../../src/proxy/plan-memory-trim.ts';
import { RELAY_PATHS, frontendConfig, listenPort, startTestProxy, startUpstreams } from './proxy-fixtures.ts';

for (const relay of RELAY_PATHS) {
  test(`--relay ${relay}: the first quiet interval after connections calls the process's malloc_trim`, async (t) => {
    const [up] = await startUpstreams(t, ['a']);
    let trims = 0;
    const proxy = await startTestProxy(t, [frontendConfig([up!.address])], undefined, {
      relay,
      trimIntervalMs: 250,
      trimMalloc: () => {
        trims++;
        return true;
      },
    });
    // A burst: more connections than a quiet interval takes, opened together so they fall in one.
    const burst = Array.from({ length: 3 * QUIET_CONNECTIONS_PER_INTERVAL }, async () => {
      const client = connect({ host: '127.0.0.1', port: listenPort(proxy) });
      client.on('error', () => {});
      await once(client, 'connect');
      client.destroy();
    });
    await Promise.all(burst);
    assert.equal(trims, 0, 'no trim while the burst is under way');
    await waitFor(() => trims > 0, { timeoutMs: 5000 });
    assert.ok(trims >= 1, `trims: ${trims}`);
  });
}
