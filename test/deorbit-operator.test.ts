// kubeward operator and kubeward deorbit as processes, against real kube-apiservers and the
// OpenStack emulator on real time: a crash (SIGKILL) in the middle of a deorbit and a restart that
// resumes it, two replicas with leader election and a take-over, and the one-shot command's exits,
// its refusal to act without --context, and a --dry-run that sends nothing destructive (read from
// the emulator's request log and the cluster's own objects).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../src/base/clock.ts';
import { KINDS } from '../src/clients/kube/resource-kinds.ts';
import { isNotFound } from '../src/clients/kube/kube-api-error.ts';
import { DEORBIT_FINALIZER, type ManagedCluster } from '../src/controllers/managed-cluster/managed-cluster.ts';
import { kubeApiserverMissing } from '../testkit/kube/kube-test-server.ts';
import { emulatorClient, startHarness, type Harness } from '../testkit/kube/deorbit-harness.ts';
import { FakeCcm, FakeCsi } from '../testkit/kube/cloud-fixtures.ts';
import { createBoundClaim, createService, ensureNamespace, resetSatellite } from '../testkit/kube/kube-objects.ts';
import { OpenStackEmulator } from '../testkit/openstack/openstack-emulator.ts';
import { waitFor } from '../testkit/wait-for.ts';
import { envWithoutOpenStack } from '../testkit/kubeward-process.ts';
import { adminTokenFixture } from '../testkit/admin-token.ts';

/** /status and drain need the admin token. */
const ADMIN_TOKEN = adminTokenFixture();

const missing = kubeApiserverMissing();
const NODE = join(import.meta.dirname, '../node_modules/.bin/node');
const MAIN = join(import.meta.dirname, '../src/cli/main.ts');
const CSI = 'cinder.csi.openstack.org';

describe('kubeward operator and deorbit processes', { skip: missing }, () => {
  let h: Harness;
  let emu: OpenStackEmulator;
  let dir: string;
  const procs: ChildProcess[] = [];
  let fixtures: { stop: boolean; done?: Promise<void> } | undefined;

  before(async () => {
    h = await startHarness();
    emu = new OpenStackEmulator();
    await emu.start();
    dir = await mkdtemp(join(tmpdir(), 'kw-op-'));
    await writeFile(join(dir, 'mgmt.kubeconfig'), await import('node:fs/promises').then((f) => f.readFile(h.satServers[0]!.kubeconfigPath, 'utf8')));
    await writeFile(join(dir, 'sat.kubeconfig'), h.satKubeconfig);
    await writeFile(join(dir, 'clouds.yaml'), emu.cloudsYaml('k1', 'demo'));
    await ensureNamespace(h.sat, 'apps');
  });
  after(async () => {
    for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    if (fixtures) {
      fixtures.stop = true;
      await fixtures.done;
    }
    await emu?.close();
    await h?.stop();
  });

  async function runFixtures(csiDelayMs: number, ccmDelayMs: number): Promise<void> {
    if (fixtures) {
      fixtures.stop = true;
      await fixtures.done;
    }
    const os = emulatorClient(emu);
    const csi = new FakeCsi({ api: h.sat, cinder: os.cinder, clock: systemClock, delayMs: csiDelayMs });
    const ccm = new FakeCcm({ api: h.sat, octavia: os.octavia, clock: systemClock, clusterName: 'k1', delayMs: ccmDelayMs });
    const state: { stop: boolean; done?: Promise<void> } = { stop: false };
    state.done = (async () => {
      for (let i = 0; i < 3000 && !state.stop; i++) {
        await csi.step().catch(() => undefined);
        await ccm.step().catch(() => undefined);
        await new Promise((r) => setTimeout(r, 150));
      }
    })();
    fixtures = state;
  }

  async function operator(identity: string, extra: string[] = []): Promise<{ proc: ChildProcess; admin: string; stderr: () => string }> {
    const proc = spawn(
      NODE,
      [
        MAIN,
        'operator',
        '--kubeconfig',
        join(dir, 'mgmt.kubeconfig'),
        '--controllers',
        'deorbit',
        '--identity',
        identity,
        '--lease-namespace',
        'default',
        '--lease-duration',
        '2s',
        '--renew-deadline',
        '1500ms',
        '--retry-period',
        '200ms',
        '--deorbit-poll-interval',
        '300ms',
        '--resync',
        '10s',
        ...ADMIN_TOKEN.args,
        '--admin-address',
        '127.0.0.1:0',
        '--log-level',
        'warn',
        ...extra,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], env: envWithoutOpenStack() },
    );
    procs.push(proc);
    // Port 0: the operator logs the address it bound at any log level.
    let stderr = '';
    proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const address = await waitFor(() => /"address":"([^"]+)","msg":"admin listener ready"/.exec(stderr)?.[1], {
      timeoutMs: 30_000,
      what: `the admin listener's address in the log; stderr: ${stderr.slice(-400)}`,
    });
    return { proc, admin: `http://${address}`, stderr: () => stderr };
  }

  const leaderOf = async (admin: string): Promise<boolean | undefined> => {
    const res = await fetch(`${admin}/status`, { headers: ADMIN_TOKEN.headers }).catch(() => undefined);
    return res?.ok ? ((await res.json()) as { leader: boolean }).leader : undefined;
  };

  const clusters = () => h.mgmt.resource<ManagedCluster>(KINDS.managedCluster);

  /** deletionPolicy null: none in the spec (the CRD's default applies). */
  async function createCluster(ns: string, deletionPolicy: 'Delete' | null = 'Delete'): Promise<void> {
    await ensureNamespace(h.mgmt, ns);
    const secret = (name: string, key: string, text: string) =>
      h.mgmt.secrets.create({ metadata: { name, namespace: ns }, data: { [key]: Buffer.from(text).toString('base64') } });
    await secret('k1-kubeconfig', 'kubeconfig', h.satKubeconfig);
    await secret('k1-openstack', 'clouds.yaml', emu.cloudsYaml('k1', 'demo'));
    await clusters().create({
      metadata: { name: 'k1', namespace: ns, finalizers: ['test.kubeward.io/keep'] },
      spec: {
        kubeconfigSecretRef: { name: 'k1-kubeconfig' },
        cloudCredentialsSecretRef: { name: 'k1-openstack', cloud: 'k1' },
        openstack: { loadBalancerClusterName: 'k1' },
        deletionPolicy: deletionPolicy ?? undefined,
      },
    });
  }
  const get = (ns: string) =>
    clusters()
      .get(ns, 'k1')
      .catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
  const hasFinalizer = async (ns: string) => (await get(ns))?.metadata.finalizers?.includes(DEORBIT_FINALIZER) ?? false;

  function volume(id: string): void {
    const now = Date.now();
    emu.store.volumes.set(id, {
      id,
      name: id,
      project_id: 'project-demo',
      user_id: 'user-demo',
      size: 1,
      status: 'available',
      created_at: now,
      updated_at: now,
      description: null,
      metadata: {},
      attachments: [],
      volume_type: '__DEFAULT__',
    });
  }
  function loadBalancer(id: string, name: string): void {
    const now = Date.now();
    emu.store.loadBalancers.set(id, {
      id,
      name,
      description: '',
      project_id: 'project-demo',
      provisioning_status: 'ACTIVE',
      operating_status: 'ONLINE',
      vip_address: '10.0.0.9',
      vip_port_id: `port-${id}`,
      vip_subnet_id: 's',
      vip_network_id: 'n',
      created_at: now,
      updated_at: now,
      tags: [],
    });
  }

  test('an operator killed in the middle of a deorbit is replaced; the new one resumes and deletes nothing twice', async () => {
    await resetSatellite(h.sat, ['apps']);
    await runFixtures(2000, 4000);
    const a = await operator('replica-a');
    await createCluster('crash');
    await waitFor(() => hasFinalizer('crash'), { timeoutMs: 30_000, intervalMs: 100, what: 'the finalizer' });
    for (const i of [1, 2]) {
      volume(`vol-c${i}`);
      await createBoundClaim(h.sat, { namespace: 'apps', name: `data-${i}`, pvName: `pv-c${i}`, source: { csi: { driver: CSI, volumeHandle: `vol-c${i}` } } });
    }
    loadBalancer('lb-c1', 'kube_service_k1_apps_web');
    loadBalancer('lb-c2', 'kube_service_k1_apps_api');
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { finalizer: true });
    await createService(h.sat, 'apps', 'api', 'LoadBalancer', { finalizer: true });
    await clusters().delete('crash', 'k1');
    await waitFor(async () => ['volumes', 'loadbalancers'].includes((await get('crash'))?.status?.deorbit?.step ?? ''), {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: 'deorbit under way',
    });
    a.proc.kill('SIGKILL');
    await new Promise((r) => a.proc.once('exit', r));
    const b = await operator('replica-b');
    await waitFor(async () => !(await hasFinalizer('crash')), { timeoutMs: 60_000, intervalMs: 200, what: 'deorbit finished by the second replica' }).catch(
      async (err: unknown) => {
        // What the replica said (warnings and up) and where deorbit stands: a slow machine or a stuck step.
        const deorbit = JSON.stringify((await get('crash').catch(() => undefined))?.status?.deorbit);
        throw new Error(`${(err as Error).message}; status.deorbit ${deorbit}; replica-b's log: ${b.stderr().slice(-2000)}`, { cause: err });
      },
    );
    const st = (await get('crash'))!.status!.deorbit!;
    assert.equal(st.step, 'done');
    assert.equal(st.attempt, 1, 'the same attempt continued');
    const events = (await h.mgmt.events.list('crash')).items;
    const deletions = events.filter((e) => /^SuccessfulDeorbit(PVC|Service|Snapshot)$/.test(e.reason));
    const perObject = new Map<string, number>();
    for (const e of deletions) perObject.set(e.message, (perObject.get(e.message) ?? 0) + (e.count ?? 1));
    assert.deepEqual([...perObject.values()], [1, 1, 1, 1], `each object deleted once: ${JSON.stringify([...perObject])}`);
    const instances = new Set(events.map((e) => e.reportingInstance));
    assert.ok(instances.has('replica-a') && instances.has('replica-b'), 'both replicas worked on it');
    assert.equal(emu.store.volumes.size, 0);
    b.proc.kill('SIGTERM');
    await new Promise((r) => b.proc.once('exit', r));
  });

  test('two replicas: only the leader acts; the standby takes over within the lease time when the leader dies', async (t) => {
    const c = await operator('replica-c');
    const d = await operator('replica-d');
    await waitFor(async () => ((await leaderOf(c.admin)) ?? false) !== ((await leaderOf(d.admin)) ?? false), {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'one leader',
    });
    for (let i = 0; i < 10; i++) {
      const [lc, ld] = [await leaderOf(c.admin), await leaderOf(d.admin)];
      assert.ok(!(lc && ld), 'never two leaders');
      await new Promise((r) => setTimeout(r, 100));
    }
    const [leader, standby] = (await leaderOf(c.admin)) ? [c, d] : [d, c];
    const leaderId = leader === c ? 'replica-c' : 'replica-d';
    await createCluster('le1');
    await waitFor(() => hasFinalizer('le1'), { timeoutMs: 20_000, intervalMs: 100, what: 'the leader adds the finalizer' });
    await clusters().delete('le1', 'k1');
    await waitFor(async () => (await get('le1'))?.status?.deorbit?.step === 'done', { timeoutMs: 30_000, intervalMs: 100, what: 'le1 deorbited' });
    const actors = new Set((await h.mgmt.events.list('le1')).items.map((e) => e.reportingInstance));
    assert.deepEqual([...actors], [leaderId], 'only the leader recorded events');
    const killedAt = Date.now();
    leader.proc.kill('SIGKILL');
    await waitFor(() => leaderOf(standby.admin), { timeoutMs: 10_000, intervalMs: 50, what: 'the standby to lead' });
    const takeoverMs = Date.now() - killedAt;
    t.diagnostic(`take-over after SIGKILL of the leader: ${takeoverMs} ms (lease 2 s, retry 200 ms)`);
    assert.ok(takeoverMs <= 2000 + 200 + 1500, `took over in ${takeoverMs} ms (lease 2 s)`);
    await createCluster('le2');
    await waitFor(() => hasFinalizer('le2'), { timeoutMs: 20_000, intervalMs: 100, what: 'the new leader adds the finalizer' });
    standby.proc.kill('SIGTERM');
    await new Promise((r) => standby.proc.once('exit', r));
    // le2 describes the same cluster as the next tests' ManagedClusters: left live, it would be their twin.
    await clusters().delete('le2', 'k1');
    await clusters().patch('le2', 'k1', { metadata: { finalizers: null } });
  });

  test('kubeward deorbit exits 0 when the cluster is clean and 1 with the leftovers on timeout', async () => {
    await resetSatellite(h.sat, ['apps']);
    await runFixtures(500, 1000);
    volume('vol-o1');
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'one-1', pvName: 'pv-o1', source: { csi: { driver: CSI, volumeHandle: 'vol-o1' } } });
    loadBalancer('lb-o1', 'kube_service_k1_apps_web');
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { finalizer: true });
    const ok = await runOnce(['--timeout', '60s']);
    assert.equal(ok.code, 0, ok.out);
    assert.match(ok.out, /SuccessfulDeorbitPVC: deleted PersistentVolumeClaim apps\/one-1/);
    assert.match(ok.out, /done: /);

    volume('vol-o2');
    emu.addDelay({ kind: 'volume-delete', id: 'vol-o2', stuck: true });
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'one-2', pvName: 'pv-o2', source: { csi: { driver: CSI, volumeHandle: 'vol-o2' } } });
    const late = await runOnce(['--timeout', '4s']);
    assert.equal(late.code, 1, late.out);
    assert.match(late.out, /gave up \(timeout\)/);
    assert.match(late.out, /volumes 1: vol-o2/);
  });

  test('the operator lets a deleted Orphan cluster go untouched, with the DeorbitSkipped event and the refusal metric', async () => {
    await resetSatellite(h.sat, ['apps'], 'v1');
    await createService(h.sat, 'apps', 'live', 'LoadBalancer');
    const op = await operator('replica-o');
    await createCluster('orphan', null);
    await waitFor(() => hasFinalizer('orphan'), { timeoutMs: 30_000, intervalMs: 100, what: 'the finalizer' });
    await clusters().delete('orphan', 'k1');
    await waitFor(async () => !(await hasFinalizer('orphan')), { timeoutMs: 30_000, intervalMs: 100, what: 'the finalizer removed' });
    assert.deepEqual(
      (await h.sat.services.list('apps')).items.map((x) => x.metadata.name),
      ['live'],
      "the live cluster's Service stays",
    );
    assert.deepEqual(
      (await h.mgmt.events.list('orphan')).items.map((e) => e.reason),
      ['DeorbitSkipped'],
    );
    const metrics = await (await fetch(`${op.admin}/metrics`)).text();
    assert.match(metrics, /^kubeward_deorbit_refusals_total\{reason="DeletionPolicyOrphan"[^}]*\} 1$/m);
    op.proc.kill('SIGTERM');
    await new Promise((r) => op.proc.once('exit', r));
  });

  test('kubeward operator --deorbit-dry-run reports what it would do for a deleted cluster and sends nothing destructive', async () => {
    await resetSatellite(h.sat, ['apps'], 'v1');
    volume('vol-r1');
    loadBalancer('lb-r1', 'kube_service_k1_apps_web');
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'dry-op', pvName: 'pv-r1', source: { csi: { driver: CSI, volumeHandle: 'vol-r1' } } });
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { finalizer: true });
    const before = emu.requests.length;
    const op = await operator('replica-dry', ['--deorbit-dry-run']);
    await createCluster('dryop');
    await clusters().delete('dryop', 'k1');
    await waitFor(async () => (await h.mgmt.events.list('dryop')).items.some((e) => e.reason === 'DeorbitDryRun'), {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'a DeorbitDryRun event',
    });
    const ev = (await h.mgmt.events.list('dryop')).items.find((e) => e.reason === 'DeorbitDryRun')!;
    assert.match(ev.message, /would delete now 2: PersistentVolumeClaim apps\/dry-op, Service apps\/web/);
    assert.match(ev.message, /load balancers 1: lb-r1/);
    const mc = (await get('dryop'))!;
    assert.equal(mc.metadata.finalizers?.includes(DEORBIT_FINALIZER), false, 'no finalizer added in a dry run');
    assert.equal(mc.status?.conditions?.find((c) => c.type === 'DeorbitComplete')?.reason, 'DryRun');
    assert.equal(mc.status?.deorbit, undefined, 'no progress kept');
    assert.deepEqual(
      (await h.sat.pvcs.list('apps')).items.map((c) => c.metadata.name),
      ['dry-op'],
    );
    assert.deepEqual(
      (await h.sat.services.list('apps')).items.map((x) => x.metadata.name),
      ['web'],
    );
    const destructive = emu.requests
      .slice(before)
      .filter((r) => !['GET', 'HEAD'].includes(r.method) && !(r.method === 'POST' && r.path.endsWith('/auth/tokens')));
    assert.deepEqual(destructive, [], 'nothing but reads and tokens went to OpenStack');
    emu.store.loadBalancers.delete('lb-r1'); // the next test names its own
    op.proc.kill('SIGTERM');
    await new Promise((r) => op.proc.once('exit', r));
  });

  test('kubeward deorbit refuses to run without --context (never the current-context), exit 2 naming the flag', async () => {
    const r = await runOnce(['--timeout', '5s'], { context: null });
    assert.equal(r.code, 2, r.out);
    assert.match(r.out, /--context/);
    const wrong = await runOnce(['--timeout', '5s'], { context: 'nope' });
    assert.equal(wrong.code, 2, wrong.out);
    assert.match(wrong.out, /--context: .* has no context "nope"; it has: kube-test/);
  });

  test('kubeward deorbit --dry-run prints what the real run would delete and wait for, and sends nothing destructive', async () => {
    await resetSatellite(h.sat, ['apps'], 'v1');
    if (fixtures) {
      fixtures.stop = true;
      await fixtures.done;
    }
    volume('vol-d1');
    loadBalancer('lb-d1', 'kube_service_k1_apps_web');
    loadBalancer('lb-foreign', 'kube_service_k1_x_apps_web');
    await createBoundClaim(h.sat, { namespace: 'apps', name: 'dry-1', pvName: 'pv-d1', source: { csi: { driver: CSI, volumeHandle: 'vol-d1' } } });
    await createService(h.sat, 'apps', 'web', 'LoadBalancer', { finalizer: true });
    await createService(h.sat, 'apps', 'internal', 'ClusterIP');
    await h.sat.volumeSnapshots('v1').create({ metadata: { name: 'snap-c', namespace: 'apps' }, spec: { volumeSnapshotClassName: 'cinder' } });
    await h.sat.volumeSnapshots('v1').create({ metadata: { name: 'snap-b', namespace: 'apps' }, spec: { volumeSnapshotClassName: 'backup' } });
    const before = emu.requests.length;
    const dry = await runOnce(['--dry-run', '--max-deletes-per-pass', '2']);
    assert.equal(dry.code, 0, dry.out);
    const sent = emu.requests.slice(before);
    assert.ok(
      sent.some((r) => r.path.includes('/volumes/detail')),
      'it did look at Cinder',
    );
    const destructive = sent.filter((r) => !['GET', 'HEAD'].includes(r.method) && !(r.method === 'POST' && r.path.endsWith('/auth/tokens')));
    assert.deepEqual(destructive, [], 'nothing but reads and a token went to OpenStack');
    assert.deepEqual(
      (await h.sat.pvcs.list('apps')).items.map((c) => c.metadata.name),
      ['dry-1'],
      'the claim is still there',
    );
    assert.deepEqual((await h.sat.services.list('apps')).items.map((x) => x.metadata.name).sort(), ['internal', 'web']);
    assert.equal((await h.sat.volumeSnapshots('v1').list('apps')).items.length, 2);
    // The same decision as the real run: budget 2 per pass, snapshot of the Cinder class only.
    assert.match(
      dry.out,
      /would delete in the first pass \(budget 2 per pass\): 2\n {2}delete VolumeSnapshot apps\/snap-c\n {2}delete PersistentVolumeClaim apps\/dry-1\n/,
    );
    assert.match(dry.out, /would delete in later passes \(held back by the budget\): 1\n {2}delete Service apps\/web\n/);
    assert.doesNotMatch(dry.out, /snap-b|internal/);
    assert.match(dry.out, /load balancers 1: lb-d1;/, "waits for its own load balancer only, not cluster k1_x's");
  });

  function runOnce(extra: string[], opts: { context?: string | null } = {}): Promise<{ code: number | null; out: string }> {
    const context = opts.context === null ? [] : ['--context', opts.context ?? 'kube-test'];
    const proc = spawn(
      NODE,
      [
        MAIN,
        'deorbit',
        '--kubeconfig',
        join(dir, 'sat.kubeconfig'),
        ...context,
        '--os-cloud',
        'k1',
        '--lb-cluster-name',
        'k1',
        '--poll-interval',
        '300ms',
        '--log-level',
        'warn',
        ...extra,
      ],
      {
        env: envWithoutOpenStack({ OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') }),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    procs.push(proc);
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    return new Promise((resolve) => proc.once('exit', (code) => resolve({ code, out })));
  }
});
