// Beyond one replica: two `kubeward operator` processes, --shard 0/2 and --shard 1/2,
// against one real kube-apiserver and the OpenStack emulator, split 20 ManagedClusters (routegc and
// flight, dry run) with no cluster handled twice and none dropped; one cluster is pinned to the
// shard its hash does not pick by the kubeward.io/shard label, one carries a label naming no shard
// and is left alone by both. Then a second replica of shard 0 waits on shard 0's Lease, and once
// shard 1 stops, its clusters are not taken by anyone (no split-brain).
//
// Who handled a cluster comes from two sides: each process's own report (/status shard.ownedClusters),
// and the emulator, which sees every OpenStack call per project and every Keystone token it issued:
// each process authenticates on its own, so a cluster acted on by both processes would show two
// tokens for its project (one process keeps one per cluster: routegc and flight share it).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKubeApi, type KubeApi } from '../src/clients/kube/kube-api.ts';
import { loadKubeConfig } from '../src/clients/kube/load-kube-config.ts';
import { KINDS } from '../src/clients/kube/resource-kinds.ts';
import type { ManagedCluster } from '../src/controllers/managed-cluster/managed-cluster.ts';
import { parsePrometheus, sumOf } from '../bench/operator/operator-stats.ts';
import { hashShard, SHARD_LABEL } from '../src/controllers/operator/shard.ts';
import { ensureNamespace, installCrd } from '../testkit/kube/kube-objects.ts';
import { kubeApiserverMissing, startKubeApiserver, type KubeTestServer } from '../testkit/kube/kube-test-server.ts';
import { KubewardProcess, runKubeward } from '../testkit/kubeward-process.ts';
import { bulkTenants, createManagedClusters } from '../testkit/operator-fleet.ts';
import type { BulkProject } from '../testkit/openstack/admin-bulk.ts';
import { OpenStackEmulator } from '../testkit/openstack/openstack-emulator.ts';
import { waitFor } from '../testkit/wait-for.ts';
import { adminTokenFixture } from '../testkit/admin-token.ts';

/** /status and drain need the admin token. */
const ADMIN_TOKEN = adminTokenFixture();

const missing = kubeApiserverMissing();
const N = 20;
const INTERVAL_MS = 3000;

test('--shard: a bad value exits 2 with one line naming the flag (or the config key) and the fix', async () => {
  const cases: [string, RegExp][] = [
    ['2/2', /^kubeward operator: --shard: "2\/2": the index counts from 0, so it must be below 2 \(0 to 1\); e\.g\. 1\/2 for the last shard\n$/],
    ['0/0', /^kubeward operator: --shard: "0\/0" has 0 shards; give between 1 and 64\n$/],
    ['0/100', /^kubeward operator: --shard: "0\/100" has 100 shards; give between 1 and 64\n$/],
    ['-1/2', /^kubeward operator: --shard: "-1\/2" is not a shard; write it as <index>\/<count>, e\.g\. 0\/2 for the first of two shards\n$/],
  ];
  for (const [value, says] of cases) {
    const r = await runKubeward(['operator', '--kubeconfig', '/nonexistent', '--admin-address', 'off', `--shard=${value}`]);
    assert.equal(r.code, 2, `${value}: ${r.stderr}`);
    assert.match(r.stderr, says);
  }
  const dir = await mkdtemp(join(tmpdir(), 'kw-opshard-'));
  try {
    await writeFile(join(dir, 'op.yaml'), 'kubeconfig: /nonexistent\nshard: 3/3\n');
    const r = await runKubeward(['operator', '--config', join(dir, 'op.yaml'), '--admin-address', 'off']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /shard.*"3\/3": the index counts from 0/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

interface Status {
  leader: boolean;
  election: { holder?: string };
  shard: { shard: string; owned: number; ownedClusters: string[]; skipped: number; pinnedHere: number; refused: string[] };
}

describe('operator sharding: two shards split the clusters (real kube-apiserver, emulator)', { skip: missing }, () => {
  let kube: KubeTestServer;
  let api: KubeApi;
  const procs: KubewardProcess[] = [];
  /** Times of the OpenStack calls made with a token of each project. */
  const calls = new Map<string, number[]>();
  const emu = new OpenStackEmulator({
    onRequest: (_e, m) => {
      if (m.projectId) calls.set(m.projectId, [...(calls.get(m.projectId) ?? []), m.atMs]);
    },
  });
  const ns = `opshard-${process.pid}`;

  before(async () => {
    kube = await startKubeApiserver();
    api = createKubeApi(loadKubeConfig({ kind: 'file', path: kube.kubeconfigPath }));
    await installCrd(api, await readFile(join(import.meta.dirname, '../deploy/operator/base/managedcluster-crd.yaml'), 'utf8'));
    await emu.start();
  });
  after(async () => {
    for (const p of procs) await p.stop();
    await emu.close();
    await kube?.stop();
  });

  async function shardProcess(
    shard: string,
    identity: string,
  ): Promise<{ proc: KubewardProcess; status: () => Promise<Status>; ready: () => Promise<boolean>; metrics: () => Promise<string> }> {
    const proc = new KubewardProcess([
      'operator',
      '--kubeconfig',
      kube.kubeconfigPath,
      '--namespace',
      ns,
      '--controllers',
      'routegc,flight',
      '--shard',
      shard,
      '--identity',
      identity,
      '--lease-namespace',
      ns,
      '--lease-duration',
      '4s',
      '--renew-deadline',
      '3s',
      '--retry-period',
      '300ms',
      '--routegc-dry-run',
      '--flight-dry-run',
      '--routegc-interval',
      `${INTERVAL_MS}ms`,
      '--flight-interval',
      `${INTERVAL_MS}ms`,
      ...ADMIN_TOKEN.args,
      '--admin-address',
      '127.0.0.1:0',
      '--log-level',
      'info',
    ]);
    procs.push(proc);
    // Port 0: the operator says which port it bound, at any log level.
    const port = await proc.adminPort({ timeoutMs: 30_000 });
    const status = async () => (await (await fetch(`http://127.0.0.1:${port}/status`, { headers: ADMIN_TOKEN.headers })).json()) as Status;
    const ready = async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.ok === true;
    const metrics = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    return { proc, status, ready, metrics };
  }

  const tokensOf = (projectId: string): number => [...emu.store.tokens.values()].filter((t) => t.projectId === projectId).length;
  const callsSince = (projectId: string, ms: number): number => (calls.get(projectId) ?? []).filter((t) => t >= ms).length;

  test("shard 0/2 and 1/2 each handle their own clusters, every cluster once; a replica waits; a stopped shard's clusters stay unhandled", async () => {
    await ensureNamespace(api, ns);
    const tenants = await bulkTenants(emu, `sh${process.pid}`, N);
    await createManagedClusters(
      api,
      ns,
      await readFile(kube.kubeconfigPath, 'utf8'),
      tenants.map((project) => ({ emu, project })),
    );
    const mcs = api.resource<ManagedCluster>(KINDS.managedCluster);
    const expected = new Map<string, number | undefined>(tenants.map((t) => [t.projectName, hashShard(ns, t.projectName, 2)]));
    // One cluster of shard 0 pinned to shard 1, one with a label that names no shard (nobody acts).
    const pinned = tenants.find((t) => expected.get(t.projectName) === 0)!;
    const refused = tenants.find((t) => t !== pinned)!;
    await mcs.patch(ns, pinned.projectName, { metadata: { labels: { [SHARD_LABEL]: '1' } } });
    await mcs.patch(ns, refused.projectName, { metadata: { labels: { [SHARD_LABEL]: '7' } } });
    const refusedHashShard = expected.get(refused.projectName)!;
    expected.set(pinned.projectName, 1);
    expected.set(refused.projectName, undefined);
    const ofShard = (i: number): BulkProject[] => tenants.filter((t) => expected.get(t.projectName) === i);
    assert.ok(ofShard(0).length >= 3 && ofShard(1).length >= 3, `both shards have clusters: ${ofShard(0).length} and ${ofShard(1).length}`);

    const s0 = await shardProcess('0/2', 's0-a');
    const s1 = await shardProcess('1/2', 's1-a');
    for (const [s, name] of [
      [s0, 'shard 0'],
      [s1, 'shard 1'],
    ] as const) {
      await waitFor(async () => (await s.status().catch(() => undefined))?.leader, {
        timeoutMs: 30_000,
        intervalMs: 200,
        what: `${name} leading; stderr: ${s.proc.stderr.slice(-400)}`,
      });
    }
    // Every handled cluster cycles at least twice (routegc and flight each make calls every cycle).
    const handled = tenants.filter((t) => t !== refused);
    await waitFor(() => handled.every((t) => (calls.get(t.projectId)?.length ?? 0) >= 6), {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: `every handled cluster cycling; without calls: ${handled
        .filter((t) => !calls.get(t.projectId))
        .map((t) => t.projectName)
        .join(', ')}`,
    });

    // What each process reports: disjoint sets, together every cluster but the refused one, each the shard function's answer.
    const [st0, st1] = [await s0.status(), await s1.status()];
    const names = (shard: number) =>
      ofShard(shard)
        .map((t) => `${ns}/${t.projectName}`)
        .sort();
    assert.deepEqual(st0.shard.ownedClusters, names(0), 'shard 0 reports exactly its clusters');
    assert.deepEqual(st1.shard.ownedClusters, names(1), 'shard 1 reports exactly its clusters, the pinned one with them');
    assert.equal(st0.shard.ownedClusters.filter((k) => st1.shard.ownedClusters.includes(k)).length, 0, 'no cluster in both');
    assert.equal(st0.shard.owned + st1.shard.owned, N - 1, 'every cluster but the refused one is owned');
    assert.equal(st1.shard.pinnedHere, 1);
    assert.deepEqual([...st0.shard.refused, ...st1.shard.refused], [`${ns}/${refused.projectName}`], 'the label naming no shard is reported once');
    assert.deepEqual((refusedHashShard === 0 ? st0 : st1).shard.refused, [`${ns}/${refused.projectName}`], 'by the shard its hash picks');
    // What the cloud saw: one Keystone token per handled project (one process each), none and no calls for the refused one.
    assert.deepEqual(
      handled.filter((t) => tokensOf(t.projectId) !== 1).map((t) => `${t.projectName}: ${tokensOf(t.projectId)} tokens`),
      [],
      'each cluster authenticated by one process only',
    );
    assert.equal(tokensOf(refused.projectId), 0, 'nobody acted on the refused cluster');
    assert.equal(calls.get(refused.projectId)?.length ?? 0, 0);
    const m1 = parsePrometheus(await s1.metrics());
    const gauge = (state: string) => sumOf(m1, 'kubeward_operator_shard_clusters', { shard: '1/2', state });
    assert.deepEqual(
      [gauge('owned'), gauge('pinned'), gauge('skipped'), gauge('refused')],
      [ofShard(1).length, 1, N - ofShard(1).length, refusedHashShard === 1 ? 1 : 0],
      "shard 1's metrics",
    );
    assert.ok(
      s1.proc.logs.some((l) => /shard: starting with the clusters this shard owns/.test(l.msg) && l.owned === ofShard(1).length),
      'shard 1 logs its summary',
    );
    const leases = async (i: number) => (await api.leases.get(ns, `kubeward-operator-shard-${i}-of-2`)).spec.holderIdentity ?? null;
    assert.equal(await leases(0), 's0-a');
    assert.equal(await leases(1), 's1-a');

    // A second replica of shard 0 waits on shard 0's Lease with a synced cache.
    const s0b = await shardProcess('0/2', 's0-b');
    await waitFor(async () => (await s0b.status().catch(() => undefined))?.election.holder === 's0-a', {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: `s0-b seeing s0-a hold the lease; stderr: ${s0b.proc.stderr.slice(-400)}`,
    });
    await waitFor(() => s0b.ready(), { timeoutMs: 30_000, intervalMs: 200, what: 's0-b ready (cache synced) as a standby' });

    // Shard 1 stops: nobody takes its clusters (shard 0 owns other clusters, its standby waits on shard 0's Lease).
    const tokensBefore = emu.store.tokens.size;
    s1.proc.signal('SIGTERM');
    await s1.proc.exited;
    const stoppedAt = Date.now();
    // Three intervals: every shard-0 cluster cycles again meanwhile, so silence of shard 1's is meaningful.
    await waitFor(() => Date.now() - stoppedAt >= 3 * INTERVAL_MS && ofShard(0).every((t) => callsSince(t.projectId, stoppedAt) > 0), {
      timeoutMs: 30_000,
      intervalMs: 500,
      what: `shard 0 cycling on; silent: ${ofShard(0)
        .filter((t) => callsSince(t.projectId, stoppedAt) === 0)
        .map((t) => t.projectName)
        .join(', ')}`,
    });
    assert.deepEqual(
      ofShard(1)
        .filter((t) => callsSince(t.projectId, stoppedAt) > 0)
        .map((t) => t.projectName),
      [],
      "no OpenStack call for shard 1's clusters after it stopped",
    );
    assert.equal(emu.store.tokens.size, tokensBefore, "nobody authenticated anew (neither for shard 1's clusters nor as a second shard-0 leader)");
    const after0b = await s0b.status();
    assert.equal(after0b.leader, false, 'the standby of shard 0 still waits');
    assert.equal(after0b.shard.owned, ofShard(0).length, 'the standby computes the same shard');
    assert.equal(await leases(0), 's0-a');
    assert.equal(await leases(1), null, 'shard 1 released its Lease on the way out and nobody took it');
    assert.equal(s0.proc.child.exitCode, null, `shard 0 kept running; stderr: ${s0.proc.stderr.slice(-400)}`);

    // Labels move clusters at run time (shard 1 still down, so every call is shard 0's): one of shard
    // 1's clusters pinned to shard 0 is taken up at once, one of shard 0's pinned to shard 1 is dropped.
    const toZero = ofShard(1).find((t) => t !== pinned)!;
    const toOne = ofShard(0)[0]!;
    await mcs.patch(ns, toZero.projectName, { metadata: { labels: { [SHARD_LABEL]: '0' } } });
    await mcs.patch(ns, toOne.projectName, { metadata: { labels: { [SHARD_LABEL]: '1' } } });
    const movedAt = Date.now();
    await s0.proc.waitForLog(/^shard: cluster moved away from this shard$/, { where: (l) => l.cluster === `${ns}/${toOne.projectName}` });
    await s0.proc.waitForLog(/^shard: cluster moved to this shard$/, { where: (l) => l.cluster === `${ns}/${toZero.projectName}` });
    // A cycle of toOne already running at the move may finish; none starts after it: one interval of grace, then three of silence.
    const quietFrom = movedAt + INTERVAL_MS;
    await waitFor(() => Date.now() - quietFrom >= 3 * INTERVAL_MS && callsSince(toZero.projectId, quietFrom) > 0, {
      timeoutMs: 30_000,
      intervalMs: 500,
      what: `shard 0 cycling ${toZero.projectName} after the label moved it there`,
    });
    assert.equal(tokensOf(toZero.projectId), 2, "shard 0 authenticated for the cluster it took over (shard 1's old token is the other)");
    assert.equal(callsSince(toOne.projectId, quietFrom), 0, `no call for ${toOne.projectName} once its label moved it to the stopped shard 1`);
    assert.equal((await s0.status()).shard.owned, ofShard(0).length, 'one cluster in, one out');
  });
});
