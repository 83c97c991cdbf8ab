// kubeward routes --provider azure in network namespaces (see test/lab/cloud-lab.ts): the hairpin
// failure and its fix, withdrawal on down, established flows across a withdrawal, node-ip NAT,
// rapid flips, drift repair and IPv6. Assertions are connections (who answered) and kernel state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../testkit/wait-for.ts';
import { labSkipReason } from './lab/lab-net.ts';
import { noteTierSkip } from '../testkit/test-tiers.ts';
import { VIP4, VIP6 } from './lab/cloud-lab.ts';
import { newLab, publish } from './lab/lab-fixtures.ts';
import { kernelNatVips, type BackendName } from './lab/kernel-rules.ts';
import { RoutesProcess, makeStateDir } from './lab/routes-process.ts';
import { NODE, REPO } from './lab/lab-net.ts';
import type { NsAgent } from './lab/ns-agent.ts';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const skip = (await labSkipReason()) ?? false;
noteTierSkip('root', skip);
const BACKENDS: BackendName[] = ['nftables', 'iptables'];

function azureArgs(stateDir: string, backend: BackendName, extra: string[] = []): string[] {
  return ['--provider', 'azure', '--backend', backend, '--state-dir', stateDir, '--resync', '1s', ...extra];
}

for (const backend of BACKENDS) {
  test(`[S1 ${backend}] the Azure hairpin drops a node's own VIP traffic, and kubeward routes fixes it`, { skip }, async (t) => {
    const lab = await newLab(t, 'azure');
    const m1 = lab.master('m1');
    await lab.setBackends(['m1']); // the LB picks m1 for every connection
    assert.equal(await lab.master('m2').agent.whoAnswers(VIP4), 'm1', 'other nodes reach m1 through the LB');
    assert.equal(await m1.agent.whoAnswers(VIP4), 'error:timeout', 'm1 gets its own SYN back with src = dst and drops it');

    const dir = await makeStateDir(t);
    await publish(dir, VIP4, 'up');
    const routes = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, backend));
    t.after(() => routes.stop().then(() => undefined));
    assert.deepEqual(await kernelNatVips(lab.net, 'm1', backend, 'output'), [VIP4]);
    for (let i = 0; i < 3; i++) assert.equal(await m1.agent.whoAnswers(VIP4), 'm1');
    const status = await routes.status();
    assert.deepEqual(
      status?.vips.map((v) => [v.vip, v.up, v.rules.length]),
      [[VIP4, true, 2]],
    );
  });

  test(`[S2 ${backend}] when the VIP goes down the redirect is withdrawn and the node reaches another apiserver through the LB`, { skip }, async (t) => {
    const lab = await newLab(t, 'azure');
    const m1 = lab.master('m1');
    const dir = await makeStateDir(t);
    await publish(dir, VIP4, 'up');
    const routes = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, backend));
    t.after(() => routes.stop().then(() => undefined));
    assert.equal(await m1.agent.whoAnswers(VIP4), 'm1');

    const started = performance.now();
    await publish(dir, VIP4, 'down');
    await waitFor(async () => (await kernelNatVips(lab.net, 'm1', backend, 'output')).length === 0, {
      timeoutMs: 3000,
      intervalMs: 10,
      what: 'redirect withdrawn',
    });
    const reactMs = performance.now() - started;
    t.diagnostic(`redirect withdrawn ${reactMs.toFixed(0)} ms after the .down file appeared (includes polling the kernel)`);
    assert.ok(reactMs < 1000, `withdrawn within 1 s (took ${reactMs.toFixed(0)} ms); resync is 1 s so this is inotify`);
    await m1.agent.unserve('m1'); // the local apiserver dies
    await lab.setBackends(['m2']); // and the LB's health check drops it
    for (let i = 0; i < 3; i++) assert.equal(await m1.agent.whoAnswers(VIP4), 'm2');
  });
}

for (const backend of BACKENDS) {
  test(`[S6 ${backend}] an established redirected connection keeps its local apiserver when the redirect is withdrawn`, { skip }, async (t) => {
    const lab = await newLab(t, 'azure');
    const m1 = lab.master('m1');
    await lab.setBackends(['m2']);
    const dir = await makeStateDir(t);
    await publish(dir, VIP4, 'up');
    const routes = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, backend));
    t.after(() => routes.stop().then(() => undefined));
    assert.equal(await m1.agent.open('long', VIP4), 'm1');

    await publish(dir, VIP4, 'down');
    await waitFor(async () => (await kernelNatVips(lab.net, 'm1', backend, 'output')).length === 0, { what: 'redirect withdrawn' });
    assert.equal(await m1.agent.talk('long', 'ping'), 'm1:ping', 'the old connection still talks to the local server');
    assert.equal(await m1.agent.whoAnswers(VIP4), 'm2', 'new connections go through the LB');
    await publish(dir, VIP4, 'up');
    await waitFor(async () => (await kernelNatVips(lab.net, 'm1', backend, 'output')).length === 1, { what: 'redirect back' });
    assert.equal(await m1.agent.talk('long', 'again'), 'm1:again', 'a second table replacement does not disturb it either');
    await m1.agent.unserve('m1');
    assert.match(await m1.agent.talk('long', 'bye'), /^error:/, 'when the local server goes, the old connection ends');
  });
}

test('[S6 control] without a conntrack user of its own, withdrawing the last redirect resets the established connection', { skip }, async (t) => {
  // What the old scripts' table does: only the redirect uses conntrack, so removing it turns
  // conntrack off in the namespace and the connection's packets leak to the LB (m2 resets them).
  const lab = await newLab(t, 'azure');
  const m1 = lab.master('m1');
  await lab.setBackends(['m2']);
  const table = (rule: string) =>
    `add table inet old-azure-routes\ndelete table inet old-azure-routes\ntable inet old-azure-routes {\n chain output {\n  type nat hook output priority -100; policy accept;\n  ${rule}\n }\n}\n`;
  await lab.net.nft('m1', table(`ip daddr ${VIP4} redirect`));
  assert.equal(await m1.agent.open('long', VIP4), 'm1');
  await lab.net.nft('m1', table(''));
  assert.match(await m1.agent.talk('long', 'ping'), /^error:/, 'the old connection breaks without the pin');
});

test('[S7] --nat-target node-ip reaches an apiserver bound only to the node address, where redirect cannot', { skip }, async (t) => {
  const lab = await newLab(t, 'azure');
  const m1 = lab.master('m1');
  await lab.setBackends(['m2']);
  await m1.agent.unserve('m1');
  await m1.agent.serve('m1', m1.ip4);
  const dir = await makeStateDir(t);
  await publish(dir, VIP4, 'up');

  const redirect = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, 'nftables'));
  assert.equal(await m1.agent.whoAnswers(VIP4), 'error:ECONNREFUSED', 'redirect sends to 127.0.0.1, where nothing listens');
  assert.equal(await redirect.stop(), 0);

  const dnat = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, 'nftables', ['--nat-target', 'node-ip', '--node-ip', m1.ip4]));
  t.after(() => dnat.stop().then(() => undefined));
  assert.equal(await m1.agent.whoAnswers(VIP4), 'm1');
  assert.deepEqual((await dnat.status())?.vips[0]?.rules, [`prerouting dnat to ${m1.ip4} all ports`, `output dnat to ${m1.ip4} all ports`]);
});

for (const backend of BACKENDS) {
  test(`[S8 ${backend}] flips every 100 ms while applying end with the rules of the final files`, { skip }, async (t) => {
    const lab = await newLab(t, 'azure');
    const m1 = lab.master('m1');
    await lab.setBackends(['m2']);
    const dir = await makeStateDir(t);
    await publish(dir, VIP4, 'down');
    const routes = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, backend, ['--resync', '30s']));
    t.after(() => routes.stop().then(() => undefined));
    const before = (await routes.status())!.generation;
    for (let i = 0; i < 21; i++) {
      await publish(dir, VIP4, i % 2 === 0 ? 'up' : 'down');
      await new Promise((r) => setTimeout(r, 100));
    }
    // Final file: up (i = 20). Resync is 30 s, so only the file events can get us there.
    await waitFor(async () => (await kernelNatVips(lab.net, 'm1', backend, 'output')).includes(VIP4), { timeoutMs: 2000, what: 'final up in the kernel' });
    assert.equal(await m1.agent.whoAnswers(VIP4), 'm1');
    const after = (await routes.status())!.generation;
    t.diagnostic(`${after - before} rule generations applied for 21 flips (${backend})`);
    assert.ok(after - before >= 2, 'the flips were applied as they came, not only at the end');
  });

  test(`[S9 ${backend}] rules removed by something else are restored within one resync`, { skip }, async (t) => {
    const lab = await newLab(t, 'azure');
    const m1 = lab.master('m1');
    await lab.setBackends(['m2']);
    const dir = await makeStateDir(t);
    await publish(dir, VIP4, 'up');
    const routes = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, backend));
    t.after(() => routes.stop().then(() => undefined));
    const vandalism =
      backend === 'nftables'
        ? [
            ['nft', 'delete', 'table', 'inet', 'kubeward-routes'],
            ['nft', 'flush', 'ruleset'],
          ]
        : [
            ['iptables', '-t', 'nat', '-F', 'KUBEWARD-ROUTES-OUTPUT'],
            ['iptables', '-t', 'nat', '-D', 'OUTPUT', '-m', 'comment', '--comment', 'kubeward routes', '-j', 'KUBEWARD-ROUTES-OUTPUT'],
            ['nft', 'flush', 'ruleset'],
          ];
    for (const [i, argv] of vandalism.entries()) {
      await lab.net.exec('m1', argv);
      assert.equal(await m1.agent.whoAnswers(VIP4, 6443, { timeoutMs: 1000 }), 'm2', `after ${argv.join(' ')}, traffic goes to the LB`);
      const started = performance.now();
      await waitFor(async () => (await m1.agent.whoAnswers(VIP4, 6443, { timeoutMs: 500 })) === 'm1', {
        timeoutMs: 3000,
        intervalMs: 50,
        what: `restored after ${argv.join(' ')}`,
      });
      t.diagnostic(`${argv.join(' ')}: restored after ${(performance.now() - started).toFixed(0)} ms (resync 1 s)`);
      await waitFor(async () => (await routes.metric('kubeward_routes_drift_repairs_total')) === i + 1, { what: `drift repair ${i + 1} counted` });
    }
  });
}

test('[S10 azure] IPv6: the hairpin fix and its withdrawal work for an IPv6 VIP', { skip }, async (t) => {
  const lab = await newLab(t, 'azure');
  const m1 = lab.master('m1');
  await lab.setBackends(['m1']);
  assert.equal(await m1.agent.whoAnswers(VIP6), 'error:timeout', 'the IPv6 hairpin fails the same way');
  const dir = await makeStateDir(t);
  await publish(dir, VIP6, 'up');
  await publish(dir, VIP4, 'down');
  const routes = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, 'iptables'));
  t.after(() => routes.stop().then(() => undefined));
  assert.deepEqual(await kernelNatVips(lab.net, 'm1', 'iptables', 'output'), [VIP6]);
  assert.equal(await m1.agent.whoAnswers(VIP6), 'm1', 'redirected to ::1');
  await lab.setBackends(['m2']);
  await publish(dir, VIP6, 'down');
  await waitFor(async () => (await kernelNatVips(lab.net, 'm1', 'iptables', 'output')).length === 0, { what: 'v6 redirect withdrawn' });
  assert.equal(await m1.agent.whoAnswers(VIP6), 'm2');
});

test('[exit] SIGTERM keeps our rules by default (as OpenShift on Azure); --cleanup-on-exit and --clean-up remove them', { skip }, async (t) => {
  const lab = await newLab(t, 'azure');
  const m1 = lab.master('m1');
  const dir = await makeStateDir(t);
  await publish(dir, VIP4, 'up');
  const keep = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, 'nftables'));
  assert.equal(await keep.stop(), 0);
  assert.deepEqual(await kernelNatVips(lab.net, 'm1', 'nftables', 'output'), [VIP4], 'kept');
  const clean = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, 'nftables', ['--cleanup-on-exit']));
  assert.equal(await clean.stop(), 0);
  assert.doesNotMatch((await lab.net.exec('m1', ['nft', 'list', 'tables'])).stdout, /kubeward-routes/, 'our table is gone');

  for (const backend of BACKENDS) {
    const again = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, backend));
    assert.equal(await again.stop(), 0);
    assert.deepEqual(await kernelNatVips(lab.net, 'm1', backend, 'output'), [VIP4], `${backend}: kept`);
    const r = await lab.net.exec('m1', [
      NODE,
      join(REPO, 'src', 'cli', 'main.ts'),
      'routes',
      '--provider',
      'azure',
      '--backend',
      backend,
      '--clean-up',
      '--admin-address',
      'off',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await kernelNatVips(lab.net, 'm1', backend, 'output'), [], `${backend}: --clean-up removed them`);
  }
  assert.doesNotMatch((await lab.net.exec('m1', ['iptables-save'])).stdout, /KUBEWARD-ROUTES/, 'no chain or jump of ours is left');
});

/**
 * Connects to VIP:port from the node again and again until stopped (bounded in count and time),
 * counting who answered: during a restart of kubeward routes every attempt must still be answered
 * locally, since the LB would hairpin it.
 */
function keepConnecting(agent: NsAgent, port = 6443, limit = 50_000): { readonly attempts: number; stop: () => Promise<Map<string, number>> } {
  const counts = new Map<string, number>();
  let stopped = false;
  let attempts = 0;
  const deadline = performance.now() + 60_000;
  const loop = (async () => {
    for (let i = 0; i < limit && !stopped && performance.now() < deadline; i++) {
      const who = await agent.whoAnswers(VIP4, port, { timeoutMs: 400 });
      attempts++;
      counts.set(who, (counts.get(who) ?? 0) + 1);
    }
  })();
  return {
    get attempts() {
      return attempts;
    },
    stop: async () => {
      stopped = true;
      await loop;
      return counts;
    },
  };
}

for (const backend of BACKENDS) {
  test(`[restart ${backend}] a restart of kubeward routes leaves no hairpin gap: every connection during it is answered`, { skip }, async (t) => {
    const lab = await newLab(t, 'azure');
    const m1 = lab.master('m1');
    await lab.setBackends(['m1']); // any connection that misses our rules hairpins and times out
    const dir = await makeStateDir(t);
    await publish(dir, VIP4, 'up');
    let routes = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, backend));
    t.after(() => routes.stop().then(() => undefined));
    const probe = keepConnecting(m1.agent);
    await waitFor(async () => (await routes.metric('kubeward_routes_rule_generation')) === 1, { what: 'first generation' });
    const during: number[] = [];
    for (let i = 0; i < 2; i++) {
      const before = probe.attempts;
      assert.equal(await routes.stop(), 0);
      routes = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, backend));
      during.push(probe.attempts - before);
    }
    const afterRestarts = probe.attempts;
    await waitFor(() => probe.attempts >= afterRestarts + 20, { what: 'attempts after the last restart' });
    const counts = await probe.stop();
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    t.diagnostic(
      `${backend}: ${total} connections in all, ${during.join(' and ')} while each restart was under way: ${JSON.stringify(Object.fromEntries(counts))}`,
    );
    assert.ok(
      during.every((n) => n >= 20),
      `attempts kept going through each restart (${during.join(', ')})`,
    );
    assert.deepEqual([...counts.keys()], ['m1'], 'every attempt answered by the local apiserver');
  });
}

test('[restart control] with --cleanup-on-exit a restart reopens the hairpin, and the same probe sees it', { skip }, async (t) => {
  const lab = await newLab(t, 'azure');
  const m1 = lab.master('m1');
  await lab.setBackends(['m1']);
  const dir = await makeStateDir(t);
  await publish(dir, VIP4, 'up');
  let routes = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, 'nftables', ['--cleanup-on-exit']));
  t.after(() => routes.stop().then(() => undefined));
  const probe = keepConnecting(m1.agent);
  await waitFor(() => probe.attempts >= 20, { what: 'the probe connecting before the restart' });
  assert.equal(await routes.stop(), 0);
  routes = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, 'nftables', ['--cleanup-on-exit']));
  const counts = await probe.stop();
  t.diagnostic(`with --cleanup-on-exit: ${JSON.stringify(Object.fromEntries(counts))}`);
  assert.ok((counts.get('error:timeout') ?? 0) >= 1, 'connections hairpinned while the rules were gone');
});

test('[ports] every port of the VIP is redirected by default (6443 and 22623); --ports 6443 leaves 22623 hairpinned', { skip }, async (t) => {
  const lab = await newLab(t, 'azure');
  const m1 = lab.master('m1');
  await lab.setBackends(['m1']);
  for (const m of lab.masters) await m.agent.serve(`${m.name}-mcs`, '::', 22623); // the machine-config server
  assert.equal(await m1.agent.whoAnswers(VIP4, 22623), 'error:timeout', 'without rules, 22623 hairpins too');
  const dir = await makeStateDir(t);
  await publish(dir, VIP4, 'up');
  const all = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, 'nftables'));
  assert.equal(await m1.agent.whoAnswers(VIP4, 6443), 'm1');
  assert.equal(await m1.agent.whoAnswers(VIP4, 22623), 'm1-mcs', 'the second port of the VIP is redirected too');
  assert.deepEqual((await all.status())?.vips[0]?.rules, ['prerouting redirect all ports', 'output redirect all ports']);
  assert.equal(await all.stop(), 0);

  const scoped = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, 'iptables', ['--ports', '6443']));
  t.after(() => scoped.stop().then(() => undefined));
  await lab.net.nft('m1', 'add table inet kubeward-routes\ndelete table inet kubeward-routes\n'); // the nftables run's kept rules
  assert.equal(await m1.agent.whoAnswers(VIP4, 6443), 'm1');
  assert.equal(await m1.agent.whoAnswers(VIP4, 22623), 'error:timeout', 'scoped to 6443: the machine-config server port hairpins (why all is the default)');
});

test("[interop] OpenShift's own azure-vips table next to ours is reported at start-up and in /status; the OVN handling is stated", { skip }, async (t) => {
  const lab = await newLab(t, 'azure');
  const m1 = lab.master('m1');
  await lab.net.nft('m1', 'table inet azure-vips {\n chain redirect-vips {\n }\n}\n');
  const dir = await makeStateDir(t);
  await publish(dir, VIP4, 'up');
  const routes = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, 'nftables'));
  t.after(() => routes.stop().then(() => undefined));
  assert.deepEqual((await routes.status())?.foreignTables, ['inet azure-vips']);
  assert.ok(
    routes.logs.some((l) => l.includes("OpenShift's own hairpin rules are present") && l.includes('inet azure-vips')),
    'warned',
  );
  assert.ok(
    routes.logs.some((l) => l.includes('OVN-Kubernetes shared gateway: while an ovnkube-controller container runs')),
    'the OVN handling is stated at start-up',
  );
  assert.equal(await m1.agent.whoAnswers(VIP4), 'm1', 'our rules work regardless');
});

test('[bad file] a state file named fe80::1%eth0.up is skipped and reported; the real VIP still goes down', { skip }, async (t) => {
  const lab = await newLab(t, 'azure');
  const m1 = lab.master('m1');
  await lab.setBackends(['m2']);
  const dir = await makeStateDir(t);
  await publish(dir, VIP4, 'up');
  await writeFile(join(dir, 'fe80::1%eth0.up'), '');
  await writeFile(join(dir, '169.254.169.254.up'), '');
  const routes = await RoutesProcess.start(lab.net, 'm1', m1.agent, azureArgs(dir, 'nftables'));
  t.after(() => routes.stop().then(() => undefined));
  assert.deepEqual(await kernelNatVips(lab.net, 'm1', 'nftables', 'output'), [VIP4]);
  await publish(dir, VIP4, 'down');
  await waitFor(async () => (await kernelNatVips(lab.net, 'm1', 'nftables', 'output')).length === 0, {
    timeoutMs: 3000,
    what: 'withdrawn despite the bad names',
  });
  assert.equal(await m1.agent.whoAnswers(VIP4), 'm2');
  assert.deepEqual((await routes.status())?.badStateFiles.sort(), ['169.254.169.254.up', 'fe80::1%eth0.up']);
  assert.equal(await routes.metric('kubeward_routes_bad_state_files'), 2);
  assert.equal(routes.logs.filter((l) => l.includes('ignoring a state file')).length, 2, 'each logged once, not every sync');
  assert.equal(await routes.metric('kubeward_routes_sync_failures_total'), 0);
});
