// Harm 8 (two leaders, docs/test-catalogue.md): a leader whose connection to the API hangs must stop acting at its
// renew deadline, before a standby can take the lease, even while its lease call and a destructive
// call are still in flight. Real kube-apiserver; the leader talks to it through a TCP/HTTP proxy on
// loopback that is told to hang; the standby talks to it directly.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { systemClock } from '../src/base/clock.ts';
import { createSilentLogger } from '../src/base/logger.ts';
import { createKubeApi, type KubeApi } from '../src/clients/kube/kube-api.ts';
import type { KubeObject } from '../src/clients/kube/kube-types.ts';
import { LeaderElector } from '../src/clients/kube/leader-elector.ts';
import { loadKubeConfig } from '../src/clients/kube/load-kube-config.ts';
import { Registry } from '../src/admin/metrics.ts';
import { DEFAULT_DEORBIT_SETTINGS } from '../src/controllers/deorbit/deorbit-types.ts';
import { Operator } from '../src/controllers/operator/operator.ts';
import { createControllerMetrics } from '../src/controllers/runtime/controller-metrics.ts';
import { ensureNamespace, installCrd } from '../testkit/kube/kube-objects.ts';
import { join } from 'node:path';
import { startKubeFaultProxy, type KubeFaultProxy } from '../testkit/kube/kube-fault-proxy.ts';
import { kubeApiserverMissing, startKubeApiserver, type KubeTestServer } from '../testkit/kube/kube-test-server.ts';
import { waitFor } from '../testkit/wait-for.ts';

const missing = kubeApiserverMissing();
const NS = 'le-hang';
const CONFIGMAP = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };

describe('leader election with a hanging API connection (real kube-apiserver)', { skip: missing }, () => {
  let kube: KubeTestServer;
  let direct: KubeApi;
  let proxy: KubeFaultProxy;
  let viaProxy: KubeApi;
  const electors: LeaderElector[] = [];
  const operators: Operator[] = [];

  before(async () => {
    kube = await startKubeApiserver();
    const text = await readFile(kube.kubeconfigPath, 'utf8');
    direct = createKubeApi(loadKubeConfig({ kind: 'file', path: kube.kubeconfigPath }));
    await ensureNamespace(direct, NS);
    await installCrd(direct, await readFile(join(import.meta.dirname, '../deploy/operator/base/managedcluster-crd.yaml'), 'utf8'));
    const doc = parse(text) as { clusters: { cluster: { server: string; 'certificate-authority-data': string } }[]; users: { user: { token: string } }[] };
    proxy = await startKubeFaultProxy({
      server: doc.clusters[0]!.cluster.server,
      ca: Buffer.from(doc.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString('utf8'),
    });
    // The client's own deadline stays at its 30 s default: only the elector's bounds may save us.
    viaProxy = createKubeApi(loadKubeConfig({ kind: 'text', text: proxy.kubeconfig(doc.users[0]!.user.token), what: 'proxy kubeconfig' }));
  });
  after(async () => {
    for (const e of electors) await e.close({ release: false });
    proxy.mode = 'pass';
    for (const o of operators) await o.close({ releaseLease: false });
    await proxy?.close();
    await kube?.stop();
  });

  test('the hung leader steps down and its fence aborts its in-flight calls before the standby leads', async () => {
    const at: Record<string, number> = {};
    const elector = (identity: string, api: KubeApi): LeaderElector => {
      const e = new LeaderElector({
        leases: api.leases,
        namespace: NS,
        name: 'op',
        identity,
        leaseDurationMs: 4_000,
        renewDeadlineMs: 2_000,
        retryPeriodMs: 400,
        clock: systemClock,
        log: createSilentLogger(),
        onStartedLeading: () => void (at[`${identity}-start`] ??= Date.now()),
        onStoppedLeading: () => void (at[`${identity}-stop`] ??= Date.now()),
      });
      electors.push(e);
      return e;
    };
    const a = elector('a', viaProxy);
    a.start();
    await waitFor(() => a.isLeader, { timeoutMs: 15_000, what: 'a leads' });
    const b = elector('b', direct);
    b.start();

    // a's controller: a destructive call per round, each through the proxy, each fenced.
    const configMaps = viaProxy.resource<KubeObject>(CONFIGMAP);
    const acted: number[] = [];
    let inFlight: Promise<unknown> | undefined;
    let inFlightError: unknown;
    const worker = (async () => {
      for (let i = 0; i < 200; i++) {
        const fence = a.fence;
        if (fence.aborted) return;
        acted.push(Date.now());
        inFlight = configMaps.create({ metadata: { name: `a-${i}`, namespace: NS } }, { signal: fence });
        try {
          await inFlight;
        } catch (err) {
          inFlightError = err;
          return;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await waitFor(() => acted.length >= 2, { timeoutMs: 10_000, what: 'a acts while leading' });

    proxy.mode = 'hang';
    await waitFor(() => b.isLeader, { timeoutMs: 20_000, what: 'b takes over' });
    await worker;
    assert.ok(at['a-stop'] !== undefined, 'a stepped down (today it keeps leading until its 30 s client timeout)');
    assert.ok(at['a-stop']! <= at['b-start']!, `a stopped (${at['a-stop']}) before b started (${at['b-start']})`);
    assert.ok(proxy.faulted > 0, "a's calls were hanging in the proxy");
    assert.ok(inFlightError !== undefined, 'the destructive call in flight was aborted by the fence');
    assert.ok(
      acted.every((t) => t < at['b-start']!),
      'a never started a destructive call once b led',
    );
    assert.equal(a.isLeader, false);
    assert.equal(a.fence.aborted, true);
  });

  test('the operator behind the hanging proxy has stopped its controllers when the standby starts leading', async () => {
    proxy.mode = 'pass';
    const op = new Operator({
      api: viaProxy,
      controllers: ['deorbit'],
      leaderElection: { namespace: NS, name: 'op2', identity: 'op-a', leaseDurationMs: 4_000, renewDeadlineMs: 2_000, retryPeriodMs: 400 },
      connector: { connect: async () => Promise.reject(new Error('not used')), forget: () => undefined },
      deorbit: DEFAULT_DEORBIT_SETTINGS,
      clock: systemClock,
      log: createSilentLogger(),
      metrics: createControllerMetrics(new Registry()),
    });
    operators.push(op);
    let lost = false;
    void op.lostLeadership.then(() => (lost = true));
    op.start();
    await waitFor(() => op.isLeader, { timeoutMs: 15_000, what: 'the operator leads' });
    const running = () => (op.status() as { controllers: { running: boolean }[] }).controllers.some((c) => c.running);
    assert.equal(running(), true);
    let seenAtTakeOver: { leader: boolean; running: boolean; lost: boolean } | undefined;
    const b = new LeaderElector({
      leases: direct.leases,
      namespace: NS,
      name: 'op2',
      identity: 'op-b',
      leaseDurationMs: 4_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 400,
      clock: systemClock,
      log: createSilentLogger(),
      onStartedLeading: () => void (seenAtTakeOver ??= { leader: op.isLeader, running: running(), lost }),
      onStoppedLeading: () => undefined,
    });
    electors.push(b);
    b.start();
    proxy.mode = 'hang';
    await waitFor(() => seenAtTakeOver, { timeoutMs: 20_000, what: 'the standby takes over' });
    assert.deepEqual(
      seenAtTakeOver,
      { leader: false, running: false, lost: true },
      'when the standby took over, the hung operator had already stopped and reported the loss',
    );
  });
});
