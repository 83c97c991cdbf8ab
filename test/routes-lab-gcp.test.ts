// kubeward routes --provider gcp in network namespaces (see test/lab/cloud-lab.ts): the proto 66
// black hole, up/down with incoming LB traffic always served, the health-check stale-conntrack case,
// IPv6 forwarded IPs from metadata, metadata failures, and a non-API port of a forwarded IP.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../testkit/wait-for.ts';
import { labSkipReason } from './lab/lab-net.ts';
import { noteTierSkip } from '../testkit/test-tiers.ts';
import { INGRESS_VIP, VIP4, VIP6, type CloudLab } from './lab/cloud-lab.ts';
import { acceptForwardedIps, newLab, publish, startMetadata } from './lab/lab-fixtures.ts';
import { kernelNatVips } from './lab/kernel-rules.ts';
import { RoutesProcess, makeStateDir } from './lab/routes-process.ts';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const skip = (await labSkipReason()) ?? false;
noteTierSkip('root', skip);

function gcpArgs(stateDir: string, extra: string[]): string[] {
  return ['--provider', 'gcp', '--state-dir', stateDir, '--resync', '1s', ...extra];
}

/** m1 of a GCP lab and an empty state directory; with accept, m2 takes the forwarded IPs too (the LB may send them there). */
async function gcpLab(t: TestContext, o: { accept?: boolean } = {}): Promise<{ lab: CloudLab; m1: ReturnType<CloudLab['master']>; dir: string }> {
  const lab = await newLab(t, 'gcp');
  if (o.accept) await acceptForwardedIps(lab, 'm2');
  return { lab, m1: lab.master('m1'), dir: await makeStateDir(t) };
}

/** kubeward routes on m1 with the GCP arguments, stopped in t.after. */
async function gcpRoutes(t: TestContext, lab: CloudLab, dir: string, extra: string[], env?: Record<string, string>): Promise<RoutesProcess> {
  const routes = await RoutesProcess.start(lab.net, 'm1', lab.master('m1').agent, gcpArgs(dir, extra), env);
  t.after(() => routes.stop().then(() => undefined));
  return routes;
}

async function localProto66(lab: CloudLab, ns: string): Promise<string> {
  return (await lab.net.exec(ns, ['ip', 'route', 'show', 'table', 'local', 'proto', '66'])).stdout.trim();
}

test('[S3] a proto 66 local route black-holes the node; it is reported, and removed with --remove-conflicting-routes', { skip }, async (t) => {
  const { lab, m1, dir } = await gcpLab(t, { accept: true });
  await lab.setBackends(['m2']); // m1's apiserver is dead and the LB knows it
  await m1.agent.unserve('m1');
  await lab.net.exec('m1', ['ip', 'route', 'add', 'local', `${VIP4}/32`, 'dev', 'eth0', 'table', 'local', 'proto', '66']);
  assert.equal(await m1.agent.whoAnswers(VIP4), 'error:ECONNREFUSED', 'the VIP is local: traffic never leaves the node');
  await publish(dir, VIP4, 'down');
  const report = await RoutesProcess.start(lab.net, 'm1', m1.agent, gcpArgs(dir, ['--vip', VIP4]));
  await waitFor(async () => (await report.status())?.conflictingRoutes.length === 1, { what: 'conflict in /status' });
  assert.deepEqual(
    (await report.status())?.conflictingRoutes.map((c) => [c.vip, c.removed]),
    [[VIP4, false]],
  );
  assert.equal(await report.metric('kubeward_routes_conflicting_routes'), 1);
  assert.equal(await m1.agent.whoAnswers(VIP4), 'error:ECONNREFUSED', 'reported only: still black-holed');
  assert.equal(await report.stop(), 0);

  const fix = await gcpRoutes(t, lab, dir, ['--vip', VIP4, '--remove-conflicting-routes']);
  await waitFor(async () => (await localProto66(lab, 'm1')) === '', { what: 'proto 66 route removed' });
  assert.equal(await m1.agent.whoAnswers(VIP4), 'm2');
  assert.equal(await fix.metric('kubeward_routes_conflicting_routes_removed_total'), 1);
});

test('[S4] incoming LB traffic is always served; the node own traffic follows its health', { skip }, async (t) => {
  const { lab, m1, dir } = await gcpLab(t, { accept: true });
  await lab.setBackends(['m1']);
  await lab.setSelfRoute('m1', true);
  await publish(dir, VIP4, 'up');
  await gcpRoutes(t, lab, dir, ['--vip', VIP4]);
  assert.equal(await m1.agent.whoAnswers(VIP4), 'm1', 'up: local');
  assert.equal(await lab.client.whoAnswers(VIP4), 'm1', 'LB traffic reaches m1');

  await publish(dir, VIP4, 'down');
  await waitFor(async () => (await kernelNatVips(lab.net, 'm1', 'nftables', 'output')).length === 0, { what: 'output redirect withdrawn' });
  assert.deepEqual(await kernelNatVips(lab.net, 'm1', 'nftables', 'prerouting'), [VIP4], 'incoming redirect stays');
  assert.equal(await lab.client.whoAnswers(VIP4), 'm1', 'down, but the LB still sends here: served (its health check must reach us)');
  await lab.setBackends(['m2']); // the LB's health check catches up
  await lab.setSelfRoute('m1', false);
  assert.equal(await m1.agent.whoAnswers(VIP4), 'm2', 'down: the node goes through the LB');
  assert.equal(await lab.client.whoAnswers(VIP4), 'm2');
});

for (const dropRange of ['none', '192.0.2.0/24']) {
  const name = dropRange === 'none' ? 'without the forward drop a health-check flow gets stuck' : 'the forward drop prevents the stale health-check flow';
  test(`[S5] ${name}`, { skip }, async (t) => {
    const { lab, dir } = await gcpLab(t);
    await lab.setBackends(['m1']);
    // The metadata server does not list the VIP yet (boot, or a restart): no incoming redirect.
    const md = await startMetadata(lab, dir, { mode: 'ok', nics: [{ ips: [] }] });
    await gcpRoutes(t, lab, dir, ['--metadata-url', md.url, '--health-checker-cidr', dropRange]);
    assert.equal(await lab.hc.whoAnswers(VIP4, 6443, { localPort: 40000 }), 'error:timeout', 'no redirect yet: m1 forwards the probe');
    const ct = await lab.net.exec('m1', ['conntrack', '-L', '-p', 'tcp', '--orig-src', '192.0.2.35', '--sport', '40000'], { okCodes: [0, 1] });
    await md.set({ mode: 'ok', nics: [{ ips: [VIP4] }] });
    await waitFor(async () => (await kernelNatVips(lab.net, 'm1', 'nftables', 'prerouting')).includes(VIP4), { what: 'incoming redirect installed' });
    const again = await lab.hc.whoAnswers(VIP4, 6443, { localPort: 40000 });
    if (dropRange === 'none') {
      assert.match(ct.stdout, /SYN_SENT.*UNREPLIED/, 'a forwarded, unreplied entry was recorded');
      assert.equal(again, 'error:timeout', 'the same source port keeps matching the stale entry');
      assert.equal(await lab.hc.whoAnswers(VIP4, 6443, { localPort: 40001 }), 'm1', 'another port works');
    } else {
      assert.doesNotMatch(ct.stdout, /192\.0\.2\.35/, 'the dropped probe left no conntrack entry');
      assert.equal(again, 'm1', 'the same source port works once the redirect is in');
    }
  });
}

test('[S10 gcp] forwarded-ipv6s from metadata: IPv6 VIP managed like IPv4', { skip }, async (t) => {
  const { lab, m1, dir } = await gcpLab(t, { accept: true });
  await lab.setBackends(['m1']);
  const md = await startMetadata(lab, dir, { mode: 'ok', nics: [{ ips: [VIP4], ipv6s: [VIP6] }] });
  await publish(dir, VIP6, 'up');
  await gcpRoutes(t, lab, dir, ['--metadata-url', md.url, '--backend', 'iptables']);
  await waitFor(async () => (await kernelNatVips(lab.net, 'm1', 'iptables', 'prerouting')).includes(VIP6), { what: 'v6 forwarded IP managed' });
  // The first IPv6 connection through the LB can wait on neighbour discovery in the fresh lab
  // (seen under load in CI): a bounded poll for the answer, which must come from m1.
  let incoming = '';
  await waitFor(async () => (incoming = await lab.client.whoAnswers(VIP6)) === 'm1', {
    timeoutMs: 10_000,
    intervalMs: 200,
    what: `incoming IPv6 LB traffic served by m1 (last answer: ${incoming})`,
  }).catch(() => undefined);
  assert.equal(incoming, 'm1', 'incoming IPv6 LB traffic served');
  assert.equal(await m1.agent.whoAnswers(VIP6), 'm1', 'up: local');
  await publish(dir, VIP6, 'down');
  await lab.setBackends(['m2']);
  await waitFor(async () => !(await kernelNatVips(lab.net, 'm1', 'iptables', 'output')).includes(VIP6), { what: 'v6 output withdrawn' });
  assert.equal(await m1.agent.whoAnswers(VIP6), 'm2');
});

test('[S12 metadata] errors, garbage, a missing header and hangs keep the last good VIPs; garbage is never a VIP', { skip }, async (t) => {
  const { lab, dir } = await gcpLab(t);
  const md = await startMetadata(lab, dir, { mode: 'ok', nics: [{ ips: [VIP4] }] });
  const routes = await gcpRoutes(t, lab, dir, ['--metadata-url', md.url, '--metadata-timeout', '300ms']);
  await waitFor(async () => (await kernelNatVips(lab.net, 'm1', 'nftables', 'prerouting')).includes(VIP4), { what: 'VIP from metadata' });
  let failures = (await routes.status())!.metadata!.failures;
  for (const mode of ['error500', 'garbage', 'no-flavor', 'hang'] as const) {
    await md.set({ mode, nics: [{ ips: [VIP4] }] });
    await waitFor(async () => (await routes.status())!.metadata!.failures > failures, { timeoutMs: 4000, what: `a failed read in mode ${mode}` });
    failures = (await routes.status())!.metadata!.failures;
    assert.deepEqual(await kernelNatVips(lab.net, 'm1', 'nftables', 'prerouting'), [VIP4], `${mode}: last good VIPs kept`);
  }
  assert.deepEqual((await routes.status())!.metadata!.lastGood?.vips, [VIP4]);
});

test(
  '[S11] every port of a forwarded IP is captured by default, as gcp-routes.sh does (okd #932); --ports 6443 leaves an ingress LB alone',
  { skip },
  async (t) => {
    const { lab, m1, dir } = await gcpLab(t);
    await lab.setBackends(['m1']);
    // The ingress controller's service on m1, kube-proxy style: INGRESS_VIP:443 is DNATed to a
    // pod port. Its chain runs after ours (priority -99), so a capture by ours would win.
    await m1.agent.serve('ingress', '::', 8443);
    await lab.net.nft(
      'm1',
      `table ip kube-proxy-standin {\n chain pre {\n  type nat hook prerouting priority -99; policy accept;\n  ip daddr ${INGRESS_VIP} tcp dport 443 dnat to ${m1.ip4}:8443\n }\n}\n`,
    );
    const md = await startMetadata(lab, dir, { mode: 'ok', nics: [{ ips: [VIP4, INGRESS_VIP] }] });
    await publish(dir, VIP4, 'up');

    const all = await RoutesProcess.start(lab.net, 'm1', m1.agent, gcpArgs(dir, ['--metadata-url', md.url, '--cleanup-on-exit']));
    await waitFor(async () => (await kernelNatVips(lab.net, 'm1', 'nftables', 'prerouting')).includes(INGRESS_VIP), { what: 'both forwarded IPs managed' });
    assert.equal(await lab.client.whoAnswers(INGRESS_VIP, 443), 'error:ECONNREFUSED', 'the default (all ports) captures it, as upstream does');
    assert.equal(await all.stop(), 0);

    await gcpRoutes(t, lab, dir, ['--metadata-url', md.url, '--ports', '6443']);
    await waitFor(async () => (await kernelNatVips(lab.net, 'm1', 'nftables', 'prerouting')).includes(INGRESS_VIP), { what: 'both forwarded IPs managed' });
    assert.equal(await lab.client.whoAnswers(INGRESS_VIP, 443), 'ingress', 'scoped: ingress traffic reaches the ingress controller');
    assert.equal(await lab.client.whoAnswers(VIP4), 'm1', 'API traffic is still redirected');
  },
);

test(
  '[no file] GCP default: a VIP with no state file keeps the local redirect; only .down withdraws it; --without-state-file down withdraws it',
  { skip },
  async (t) => {
    const { lab, m1, dir } = await gcpLab(t, { accept: true }); // no watcher has written anything: the public API VIP's case
    await lab.setBackends(['m2']);
    const upstream = await RoutesProcess.start(lab.net, 'm1', m1.agent, gcpArgs(dir, ['--vip', VIP4, '--cleanup-on-exit']));
    assert.deepEqual(await kernelNatVips(lab.net, 'm1', 'nftables', 'output'), [VIP4]);
    assert.equal(await m1.agent.whoAnswers(VIP4), 'm1', "no file: the node's own traffic goes to the local apiserver");
    assert.deepEqual(
      (await upstream.status())?.vips.map((v) => [v.file, v.up]),
      [['none', true]],
    );
    assert.equal((await upstream.status())?.withoutStateFile, 'up');
    await publish(dir, VIP4, 'down');
    await waitFor(async () => (await kernelNatVips(lab.net, 'm1', 'nftables', 'output')).length === 0, { timeoutMs: 3000, what: '.down withdraws' });
    assert.equal(await m1.agent.whoAnswers(VIP4), 'm2');
    await rm(join(dir, `${VIP4}.down`));
    await waitFor(async () => (await kernelNatVips(lab.net, 'm1', 'nftables', 'output')).length === 1, { timeoutMs: 3000, what: 'gone .down: up again' });
    assert.equal(await upstream.stop(), 0);

    await gcpRoutes(t, lab, dir, ['--vip', VIP4, '--without-state-file', 'down']);
    assert.deepEqual(await kernelNatVips(lab.net, 'm1', 'nftables', 'output'), [], 'the stricter reading: no file, no local redirect');
    assert.deepEqual(await kernelNatVips(lab.net, 'm1', 'nftables', 'prerouting'), [VIP4], 'LB traffic is still served');
    assert.equal(await m1.agent.whoAnswers(VIP4), 'm2');
  },
);

test('[ports gcp] the second port of the API VIP (22623) follows the same rules as 6443', { skip }, async (t) => {
  const { lab, m1, dir } = await gcpLab(t, { accept: true });
  for (const m of lab.masters) await m.agent.serve(`${m.name}-mcs`, '::', 22623);
  await lab.setBackends(['m1']);
  await lab.setSelfRoute('m1', true);
  await publish(dir, VIP4, 'up');
  await gcpRoutes(t, lab, dir, ['--vip', VIP4]);
  assert.equal(await m1.agent.whoAnswers(VIP4, 22623), 'm1-mcs', "up: the node's own machine-config traffic stays local");
  assert.equal(await lab.client.whoAnswers(VIP4, 22623), 'm1-mcs', 'LB traffic to 22623 reaches this node');
  await publish(dir, VIP4, 'down');
  await waitFor(async () => (await kernelNatVips(lab.net, 'm1', 'nftables', 'output')).length === 0, { what: 'withdrawn' });
  await lab.setBackends(['m2']);
  await lab.setSelfRoute('m1', false);
  assert.equal(await m1.agent.whoAnswers(VIP4, 22623), 'm2-mcs', 'down: through the LB, on both ports');
  assert.equal(await m1.agent.whoAnswers(VIP4, 6443), 'm2');
});

test("[interop gcp] OpenShift's gcp-vips table next to ours is reported", { skip }, async (t) => {
  const { lab, dir } = await gcpLab(t);
  await lab.net.nft('m1', 'table ip gcp-vips {\n chain local-vips {\n }\n}\n');
  const routes = await gcpRoutes(t, lab, dir, ['--vip', VIP4]);
  assert.deepEqual((await routes.status())?.foreignTables, ['ip gcp-vips']);
});

test('[aux] a failing auxiliary ip route check never keeps the rules out', { skip }, async (t) => {
  const { lab, m1, dir } = await gcpLab(t);
  // A PATH where `ip` fails: the proto 66 check fails on every full sync; nft still works.
  const bin = await mkdtemp(join(tmpdir(), 'kwl-bin-'));
  t.after(() => rm(bin, { recursive: true, force: true }));
  await writeFile(join(bin, 'ip'), '#!/bin/sh\necho "ip: simulated failure" >&2\nexit 1\n', { mode: 0o755 });
  const routes = await gcpRoutes(t, lab, dir, ['--vip', VIP4], { PATH: `${bin}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}` });
  assert.deepEqual(await kernelNatVips(lab.net, 'm1', 'nftables', 'output'), [VIP4]);
  assert.equal(await m1.agent.whoAnswers(VIP4), 'm1');
  await waitFor(async () => ((await routes.metric('kubeward_routes_auxiliary_check_failures_total')) ?? 0) >= 1, { what: 'failure counted' });
});
