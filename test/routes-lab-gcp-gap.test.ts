// GCP's withdrawal gap (OCPBUGS-100298) in network namespaces (see test/lab/cloud-lab.ts): the local
// apiserver dies, the watcher's `.down` arrives, and the emulated GCP load balancer keeps returning
// the node's own VIP traffic to the node for LB_LATE_MS more. With --down-peer those new
// connections reach a healthy peer apiserver (real HTTPS stand-ins, checked on /readyz); without it
// every one of them fails. Counted per connection, both backends.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../testkit/wait-for.ts';
import { createTestCa } from '../testkit/certs.ts';
import { labSkipReason } from './lab/lab-net.ts';
import { noteTierSkip } from '../testkit/test-tiers.ts';
import { VIP4, VIP6, type CloudLab } from './lab/cloud-lab.ts';
import { acceptForwardedIps, newLab, publish } from './lab/lab-fixtures.ts';
import { kernelNatVips, kernelOutputDnatTargets, type BackendName } from './lab/kernel-rules.ts';
import { RoutesProcess, makeStateDir } from './lab/routes-process.ts';
import { startStandin, type Standin } from './lab/apiserver-standin-process.ts';
import type { NsAgent } from './lab/ns-agent.ts';

const skip = (await labSkipReason()) ?? false;
noteTierSkip('root', skip);

/** How long after `.down` the emulated load balancer keeps sending m1's own traffic back to m1 (GCP: 10-15 s). */
const LB_LATE_MS = 3000;
/** --down-peer-window: covers the late withdrawal with room to spare, as the 30 s default does for GCP's. */
const WINDOW_MS = 6000;
/** Connections are counted until this long after `.down`: past the withdrawal and the window's end. */
const OBSERVE_MS = 8000;

interface GapLab {
  lab: CloudLab;
  dir: string;
  api: Record<'m1' | 'm2' | 'm3', Standin>;
}

/**
 * Three GCP backends with HTTPS apiserver stand-ins; m2 and m3 accept the VIP (their own routes
 * agent's incoming redirect); the LB has m1 programmed, so m1's own VIP traffic comes back to m1.
 */
async function gapLab(t: TestContext): Promise<GapLab> {
  const lab = await newLab(t, 'gcp', 3);
  const ca = await createTestCa();
  t.after(() => ca.close());
  const cert = await ca.issueServer('apiserver', ['DNS:localhost', 'IP:127.0.0.1', `IP:${VIP4}`, `IP:${VIP6}`, ...lab.masters.map((m) => `IP:${m.ip4}`)]);
  const api = {} as GapLab['api'];
  for (const m of lab.masters) {
    await m.agent.unserve(m.name); // the HTTPS stand-ins take port 6443
    api[m.name as 'm1'] = await startStandin(lab.net, m.name, m.name, cert.certFile, cert.keyFile);
  }
  for (const m of ['m2', 'm3']) await acceptForwardedIps(lab, m);
  await lab.setBackends(['m1', 'm2', 'm3']);
  await lab.setSelfRoute('m1', true);
  return { lab, dir: await makeStateDir(t), api };
}

/**
 * The local apiserver dies and `.down` is published; the LB withdraws m1 LB_LATE_MS later. Opens a
 * new connection from m1 to the VIP every 100 ms (from `from` on) until OBSERVE_MS after `.down`
 * (at most 400), and returns who answered each and when, and when the LB withdrew m1 (ms after `.down`).
 */
/** Which apiserver answers https://VIP:6443/version from this namespace (its name, or the error), on a new connection. */
async function whoServes(agent: NsAgent, vip = VIP4): Promise<string> {
  const r = await agent.httpGet(`https://${vip.includes(':') ? `[${vip}]` : vip}:6443/version`, 1500);
  return 'status' in r ? String((JSON.parse(r.body) as { server: string }).server) : `error:${r.error}`;
}

async function failAndCount(g: GapLab, from: () => Promise<unknown>, vip = VIP4): Promise<{ seen: { atMs: number; answer: string }[]; withdrawnAtMs: number }> {
  const m1 = g.lab.master('m1');
  g.api.m1.command('close'); // the local apiserver is gone: no listener, its connections dropped
  await waitFor(async () => (await whoServes(m1.agent, vip)).startsWith('error:'), { timeoutMs: 5000, what: 'the local apiserver refuses' });
  const t0 = Date.now();
  await publish(g.dir, vip, 'down');
  const withdraw = (async () => {
    await new Promise((r) => setTimeout(r, LB_LATE_MS)); // the LB's health check is slower than the watcher
    await g.lab.setBackends(['m2', 'm3']);
    await g.lab.setSelfRoute('m1', false);
    return Date.now() - t0;
  })();
  await from();
  // A new connection every 100 ms, each on its own: a black-holed one (a 1.5 s timeout) does not
  // hold back the ones after it.
  const attempts: Promise<{ atMs: number; answer: string }>[] = [];
  for (let i = 0; i < 400 && Date.now() - t0 < OBSERVE_MS; i++) {
    const atMs = Date.now() - t0;
    attempts.push(whoServes(m1.agent, vip).then((answer) => ({ atMs, answer })));
    await new Promise((r) => setTimeout(r, 100));
  }
  return { seen: await Promise.all(attempts), withdrawnAtMs: await withdraw };
}

function routesArgs(dir: string, backend: BackendName, extra: string[]): string[] {
  return ['--provider', 'gcp', '--state-dir', dir, '--resync', '1s', '--vip', VIP4, '--backend', backend, ...extra];
}

for (const backend of ['nftables', 'iptables'] as const) {
  test(`[gcp gap ${backend}] while the LB still sends to the node after .down, its own new connections reach a healthy peer: 0 failed`, { skip }, async (t) => {
    const g = await gapLab(t);
    const { lab } = g;
    const m1 = lab.master('m1');
    const [m2ip, m3ip] = [lab.master('m2').ip4, lab.master('m3').ip4];
    g.api.m2.command('readyz fail'); // the first listed peer is not ready: it must be passed over
    await publish(g.dir, VIP4, 'up');
    const args = ['--down-peer', m2ip, '--down-peer', m3ip, '--down-peer-interval', '300ms', '--down-peer-window', `${WINDOW_MS}ms`];
    const routes = await RoutesProcess.start(lab.net, 'm1', m1.agent, routesArgs(g.dir, backend, args));
    t.after(() => routes.stop().then(() => undefined));
    assert.equal(await whoServes(m1.agent), 'm1', 'up: the local apiserver');
    assert.deepEqual(await kernelOutputDnatTargets(lab.net, 'm1', backend), [], 'up: no peer rule');

    let ruleInMs = 0;
    const { seen, withdrawnAtMs } = await failAndCount(g, async () => {
      const start = Date.now();
      await waitFor(async () => (await kernelOutputDnatTargets(lab.net, 'm1', backend)).length > 0, { timeoutMs: 3000, intervalMs: 20, what: 'peer rule' });
      ruleInMs = Date.now() - start;
    });
    const failed = seen.filter((s) => s.answer.startsWith('error:'));
    const lbLate = seen.filter((s) => s.atMs < LB_LATE_MS);
    t.diagnostic(
      `${backend}: peer rule in force ${ruleInMs} ms after .down; ${seen.length} new connections in ${OBSERVE_MS} ms after .down, ` +
        `${lbLate.length} of them before the LB withdrew the node (at ${withdrawnAtMs} ms); failed: ${failed.length}`,
    );
    assert.deepEqual(failed, [], 'no new connection to the VIP fails');
    assert.ok(lbLate.length >= 5, `enough connections while the LB still sent to the node (${lbLate.length})`);
    assert.deepEqual([...new Set(lbLate.map((s) => s.answer))], ['m3'], 'while the LB is late: the healthy peer, never the not-ready one');
    const afterWindow = seen.filter((s) => s.atMs > WINDOW_MS + 1000);
    assert.ok(afterWindow.length > 0 && afterWindow.every((s) => s.answer === 'm2' || s.answer === 'm3'), 'after the window: through the LB');
    assert.deepEqual(await kernelOutputDnatTargets(lab.net, 'm1', backend), [], 'window over: the peer rule is gone');
    assert.deepEqual(await kernelNatVips(lab.net, 'm1', backend, 'prerouting'), [VIP4], 'incoming LB traffic is still redirected');

    // Recovery: the local apiserver is back and `.up` published: local again, no peer rule left.
    g.api.m1.command('open');
    await lab.setBackends(['m1', 'm2', 'm3']);
    await lab.setSelfRoute('m1', true);
    await publish(g.dir, VIP4, 'up');
    await waitFor(async () => (await whoServes(m1.agent)) === 'm1', { timeoutMs: 5000, what: 'local again' });
    assert.deepEqual(await kernelOutputDnatTargets(lab.net, 'm1', backend), []);

    // No healthy peer: today's behaviour, and /status says why; a peer that passes again is used.
    g.api.m3.command('readyz fail');
    await waitFor(async () => (await routes.status())?.downPeers?.checks.peers.every((p) => !p.healthy), { timeoutMs: 5000, what: 'both peers failing' });
    await publish(g.dir, VIP4, 'down');
    await waitFor(async () => (await routes.status())?.downPeers?.unserved.some((u) => u.vip === VIP4), { timeoutMs: 3000, what: 'unserved' });
    assert.deepEqual(await kernelOutputDnatTargets(lab.net, 'm1', backend), [], 'no healthy peer: no redirect');
    g.api.m3.command('readyz ok');
    await waitFor(async () => (await kernelOutputDnatTargets(lab.net, 'm1', backend)).join() === m3ip, { timeoutMs: 3000, what: 'm3 passes again' });
    assert.equal(await routes.metric('kubeward_routes_down_peer_redirects'), 1);

    // Exit without --cleanup-on-exit: the rules stay, but not a peer rule nobody checks any more.
    assert.equal(await routes.stop(), 0);
    assert.deepEqual(await kernelOutputDnatTargets(lab.net, 'm1', backend), [], 'exit: peer rule removed');
    assert.deepEqual(await kernelNatVips(lab.net, 'm1', backend, 'prerouting'), [VIP4], 'exit: the other rules stay');
  });
}

test('[gcp gap control] without --down-peer the same window black-holes every new connection to the VIP', { skip }, async (t) => {
  const g = await gapLab(t);
  const m1 = g.lab.master('m1');
  await publish(g.dir, VIP4, 'up');
  const routes = await RoutesProcess.start(g.lab.net, 'm1', m1.agent, routesArgs(g.dir, 'nftables', []));
  t.after(() => routes.stop().then(() => undefined));
  // Counted from `.down` on: before the withdrawal a connection fails whether the output redirect
  // is still in (the dead local apiserver) or already gone (the load balancer sends it back).
  const { seen } = await failAndCount(g, () => Promise.resolve());
  const lbLate = seen.filter((s) => s.atMs < LB_LATE_MS);
  const failed = lbLate.filter((s) => s.answer.startsWith('error:'));
  t.diagnostic(
    `without --down-peer: ${failed.length} of ${lbLate.length} new connections failed before the LB withdrew the node (${[...new Set(failed.map((f) => f.answer))].join(', ')})`,
  );
  // A connection opened less than its 1.5 s timeout before the withdrawal can still get through on
  // a SYN retransmit; every earlier one is lost.
  const wellBefore = lbLate.filter((s) => s.atMs < LB_LATE_MS - 1500);
  assert.ok(wellBefore.length >= 5, `enough connections well before the withdrawal (${wellBefore.length})`);
  assert.deepEqual(
    wellBefore.filter((s) => !s.answer.startsWith('error:')),
    [],
    'every one is sent back to this node and lost',
  );
  assert.ok(
    wellBefore.some((s) => s.answer === 'error:timeout'),
    'black-holed through the load balancer (timeouts), not only refused by the dead local apiserver',
  );
  assert.ok(
    seen.filter((s) => s.atMs > LB_LATE_MS + 1000).every((s) => !s.answer.startsWith('error:')),
    'once the LB has withdrawn the node, the LB path works',
  );
});

test('[gcp gap IPv6] an IPv6 VIP goes to a healthy IPv6 peer while the LB still sends to the node: 0 failed', { skip }, async (t) => {
  const g = await gapLab(t);
  const m1 = g.lab.master('m1');
  const m3ip6 = g.lab.master('m3').ip6;
  await publish(g.dir, VIP6, 'up');
  const args = ['--down-peer', g.lab.master('m2').ip4, '--down-peer', m3ip6, '--down-peer-interval', '300ms', '--down-peer-window', `${WINDOW_MS}ms`];
  const routes = await RoutesProcess.start(
    g.lab.net,
    'm1',
    m1.agent,
    [...routesArgs(g.dir, 'nftables', args)].map((a) => (a === VIP4 ? VIP6 : a)),
  );
  t.after(() => routes.stop().then(() => undefined));
  // The first IPv6 connection in a fresh lab can wait on neighbour discovery: a bounded poll.
  await waitFor(async () => (await whoServes(m1.agent, VIP6)) === 'm1', { timeoutMs: 10_000, intervalMs: 200, what: 'up: local over IPv6' });
  const { seen } = await failAndCount(
    g,
    () =>
      waitFor(async () => (await kernelOutputDnatTargets(g.lab.net, 'm1', 'nftables')).join() === m3ip6, {
        timeoutMs: 3000,
        intervalMs: 20,
        what: 'v6 peer rule',
      }),
    VIP6,
  );
  const failed = seen.filter((s) => s.answer.startsWith('error:'));
  const lbLate = seen.filter((s) => s.atMs < LB_LATE_MS);
  t.diagnostic(`IPv6: ${seen.length} new connections, ${lbLate.length} before the LB withdrew the node; failed: ${failed.length}`);
  assert.deepEqual(failed, []);
  assert.ok(lbLate.length >= 5);
  assert.deepEqual([...new Set(lbLate.map((s) => s.answer))], ['m3'], 'the IPv6 peer, never the IPv4 one');
});
