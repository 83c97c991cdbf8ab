// kubeward agent end to end in network namespaces (scenario 12 of the routes lab, in one process):
// on m1 the agent runs the proxy (to the local apiserver), the watcher on the proxy's checks and
// routes. A failing /readyz moves m1's VIP traffic to the LB and its recovery brings it back; the
// proxy fails over between the local apiserver and m2 meanwhile; SIGTERM withdraws the redirect.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createInterface } from 'node:readline';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '../testkit/wait-for.ts';
import { kubewardArgv } from '../testkit/kubeward-process.ts';
import { labSkipReason, stopChild } from './lab/lab-net.ts';
import { noteTierSkip } from '../testkit/test-tiers.ts';
import { VIP4 } from './lab/cloud-lab.ts';
import { type RoutesStatus } from './lab/routes-process.ts';
import { standinLab, whoServes } from './lab/apiserver-standin-process.ts';
import { adminTokenFixture } from '../testkit/admin-token.ts';

/** /status needs the admin token. */
const ADMIN_TOKEN = adminTokenFixture();

const skip = (await labSkipReason()) ?? false;
noteTierSkip('root', skip);
const ADMIN = '127.0.0.1:9456';

test('[S12 agent] proxy, watch and routes in one process: /readyz failing and recovering, proxy failover, SIGTERM', { skip }, async (t) => {
  const { lab, ca, api1, dir } = await standinLab(t);
  const m1 = lab.master('m1');
  const configFile = join(dir, 'agent.yaml');
  await writeFile(
    configFile,
    [
      `adminAddress: ${ADMIN}`,
      `adminTokenFile: ${ADMIN_TOKEN.path}`,
      'proxy:',
      // The local apiserver first, m2 through the VIP's load balancer as the other upstream.
      '  listen: ["127.0.0.1:16443"]',
      `  upstream: ["127.0.0.1:6443", "${VIP4}:6443"]`,
      `  caFile: ${ca.certFile}`,
      '  interval: 200ms',
      '  timeout: 500ms',
      '  fall: 2',
      '  shutdownGrace: 1s',
      'watch:',
      '  healthUrl: https://127.0.0.1:6443/readyz',
      `  caFile: ${ca.certFile}`,
      `  vip: [${VIP4}]`,
      `  stateDir: ${dir}`,
      '  interval: 200ms',
      '  fall: 2',
      '  heartbeat: 500ms',
      'routes:',
      '  provider: azure',
      `  stateDir: ${dir}`,
      '  staleAfter: 3s',
      '',
    ].join('\n'),
  );
  const logs: string[] = [];
  const child = lab.net.spawn('m1', kubewardArgv(['agent', '--config', configFile]));
  child.stdout!.resume();
  createInterface({ input: child.stderr! }).on('line', (l) => logs.push(l));
  t.after(() => stopChild(child, 'SIGKILL', 1000).then(() => undefined));
  const status = async () => {
    const r = await m1.agent.httpGet(`http://${ADMIN}/status`, 1000, ADMIN_TOKEN.headers);
    return 'status' in r && r.status === 200 ? (JSON.parse(r.body) as { routes: RoutesStatus; proxy: unknown; watch: unknown }) : undefined;
  };
  await waitFor(() => logs.some((l) => l.includes("the watcher uses the proxy's checks")), {
    timeoutMs: 15_000,
    what: `shared check log; logs: ${logs.slice(-3).join(' | ')}`,
  });
  await waitFor(async () => (await whoServes(m1.agent)) === 'm1', { timeoutMs: 20_000, intervalMs: 100, what: 'watch says up, routes redirects' });
  // The redirect can come from the sync that the start itself waits for: poll until the start is over.
  const s = await waitFor(
    async () => {
      const st = await status();
      return st && !('starting' in st) ? st : undefined;
    },
    { timeoutMs: 15_000, what: 'the agent started (its /status past "starting")' },
  );
  assert.deepEqual(Object.keys(s).sort(), ['proxy', 'routes', 'watch'], 'one admin listener with every mode');

  let started = performance.now();
  api1.command('readyz fail');
  await waitFor(async () => (await whoServes(m1.agent)) === 'm2', { timeoutMs: 10_000, intervalMs: 50, what: 'traffic to the LB after /readyz fails' });
  t.diagnostic(`readyz failing → m1's VIP traffic on m2 after ${(performance.now() - started).toFixed(0)} ms (proxy checks every 200ms, fall 2)`);
  // Proxy failover in the same process: with the local apiserver down, clients of 127.0.0.1:16443 reach m2.
  await waitFor(
    async () => {
      const r = await m1.agent.httpGet('https://127.0.0.1:16443/version', 1500);
      return 'status' in r && (JSON.parse(r.body) as { server: string }).server === 'm2';
    },
    { timeoutMs: 10_000, intervalMs: 100, what: 'the proxy sends clients to m2' },
  );

  api1.command('readyz ok');
  await waitFor(async () => (await whoServes(m1.agent)) === 'm1', { timeoutMs: 10_000, intervalMs: 50, what: 'back to local after recovery' });

  started = performance.now();
  assert.equal(await stopChild(child, 'SIGTERM', 10_000), 0);
  await waitFor(async () => (await whoServes(m1.agent)) === 'm2', { timeoutMs: 5000, intervalMs: 50, what: 'traffic to the LB after the agent got SIGTERM' });
  t.diagnostic(`agent SIGTERM → m1's VIP traffic on m2 after ${(performance.now() - started).toFixed(0)} ms`);
});
