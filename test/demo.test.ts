// kubeward demo end to end: the real command, on its own stand-ins, to the summary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runKubeward } from '../testkit/kubeward-process.ts';

test("the demo runs its outage script, takes every failure out and reports the clients' view", async () => {
  const r = await runKubeward(['demo', '--duration', '12s', '--no-color'], 60_000);
  assert.equal(r.code, 0, r.stderr);
  const sent = Number(/requests: (\d+) sent/.exec(r.stdout)?.[1]);
  const failed = Number(/requests: \d+ sent, \d+ ok, (\d+) failed/.exec(r.stdout)?.[1]);
  assert.ok(sent > 50, `a steady load went through the proxy (${sent})`);
  // A request in flight on a killed apiserver's connection can be cut; new ones must not fail.
  assert.ok(failed <= Math.ceil(sent * 0.02), `client failures stay rare: ${failed} of ${sent}\n${r.stdout}`);
  for (const what of ['apiserver-1 is killed', 'apiserver-2 starts a graceful shutdown', 'apiserver-3 hangs']) {
    assert.match(r.stdout, new RegExp(`${what}[^\\n]*: taken out after \\d+\\.\\ds`), what);
  }
  assert.match(r.stdout, /watcher on apiserver-1: up {2}files: 192\.0\.2\.10\.up/, 'the watcher saw apiserver-1 come back');
  assert.match(r.stdout, /component logs: .*demo\.log/);
});
