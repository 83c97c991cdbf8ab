// The leader's fence is checked at the last moment, by this replica's own clock: a real Lease on a
// real kube-apiserver, the OpenStack emulator, and a clock that jumps past the renew deadline while
// the step-down timer has not fired yet (a blocked event loop, a starved process). The term's abort
// signal still says "leading" then; the call fence in the clients does not let a route removal, a
// reboot or a Node write go out, counts it, and ends the term on the spot. Reads still go.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '../../src/admin/metrics.ts';
import { systemClock, type Clock } from '../../src/base/clock.ts';
import { createSilentLogger } from '../../src/base/logger.ts';
import { createKubeApi } from '../../src/clients/kube/kube-api.ts';
import { LeaderElector } from '../../src/clients/kube/leader-elector.ts';
import { loadKubeConfig } from '../../src/clients/kube/load-kube-config.ts';
import type { Node } from '../../src/clients/kube/kube-types.ts';
import { resolveCloudConfig } from '../../src/clients/openstack/cloud-config.ts';
import { createOpenStackClient } from '../../src/clients/openstack/create-openstack-client.ts';
import { RouteWriter } from '../../src/controllers/managed-cluster/route-writer.ts';
import { LeaseCallFence } from '../../src/controllers/operator/lease-call-fence.ts';
import { kubeApiserverMissing } from '../../testkit/kube/kube-test-server.ts';
import { useKubeCluster } from '../../testkit/kube/kube-cluster.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { openCloud } from './routegc-fixture.ts';

const missing = kubeApiserverMissing();
const NS = 'fence-clock';

describe('the call fence checks the lease by the clock just before each changing call (real Lease, emulator)', { skip: missing }, () => {
  const mgmt = useKubeCluster({ namespace: NS });
  /** Real time plus a jump the test makes: timers (the elector's step-down) run on real time and stay late. */
  let jumpMs = 0;
  const clock: Clock = { now: () => Date.now() + jumpMs, sleep: systemClock.sleep, timer: systemClock.timer };
  let elector: LeaderElector;
  before(async () => {
    elector = new LeaderElector({
      leases: mgmt.api.leases,
      namespace: NS,
      name: 'fence-clock',
      identity: 'replica-1',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      // No renew during the test: only the clock moves the deadline.
      retryPeriodMs: 600_000,
      clock,
      log: createSilentLogger(),
      onStartedLeading: () => undefined,
      onStoppedLeading: () => undefined,
    });
    elector.start();
    await waitFor(() => elector.isLeader, { what: 'the lease', timeoutMs: 20_000 });
  });
  after(() => elector.close({ release: false }));

  test('a late route removal, reboot and Node write are not sent; reads go on; the term ends at once', async (t) => {
    const c = await openCloud(t);
    const registry = new Registry();
    const fence = new LeaseCallFence({ registry, log: createSilentLogger() });
    fence.follow(elector);
    const env = {
      OS_AUTH_URL: c.emu.authUrl,
      OS_USERNAME: 'admin',
      OS_PASSWORD: 'admin',
      OS_PROJECT_NAME: 'admin',
      OS_USER_DOMAIN_NAME: 'Default',
      OS_PROJECT_DOMAIN_NAME: 'Default',
    };
    const os = createOpenStackClient({
      config: resolveCloudConfig({ env }),
      log: createSilentLogger(),
      fence,
      retry: { baseDelayMs: 5, maxDelayMs: 20, maxAttempts: 2 },
    });
    const cluster = createKubeApi(loadKubeConfig({ kind: 'text', text: mgmt.kubeconfigText, what: 'test' }), { fence });
    const a = await c.server('a');
    await mgmt.api.nodes.create({ metadata: { name: 'fence-node' }, spec: {} } as Node).catch(() => undefined);
    const r1 = { destination: '100.100.1.0/24', nexthop: '10.0.0.98' };
    const r2 = { destination: '100.100.2.0/24', nexthop: '10.0.0.99' };
    await c.os.neutron.updateRoutes(c.routerId, [r1, r2]);
    const writer = new RouteWriter(os.neutron);

    // While the lease is held by the clock, the same calls go out (the case below can fail).
    assert.deepEqual((await writer.remove(c.routerId, [r1], elector.fence)).changed, [r1]);

    jumpMs = 10_500; // past the renew deadline; the step-down timer is still ~10 s of real time away
    assert.equal(elector.fence.aborted, false, 'the signal alone would still let the call through');
    c.emu.requests = [];
    await assert.rejects(writer.remove(c.routerId, [r2], elector.fence), /leadership lost: the renew deadline passed/);
    assert.deepEqual(await c.routes(), ['100.100.2.0/24>10.0.0.99'], 'the route is still there');
    assert.equal(elector.fence.aborted, true, 'the term ended at the refused call');
    await assert.rejects(os.nova.reboot(a.id, 'SOFT'), /lease|leadership/);
    await assert.rejects(cluster.nodes.patch(undefined, 'fence-node', { metadata: { labels: { x: 'y' } } }, 'merge'), /lease|leadership/);
    const changing = c.emu.requests.filter((x) => x.method !== 'GET' && !x.path.includes('/auth/tokens'));
    assert.deepEqual(changing, [], 'no changing request reached the cloud');
    assert.ok((await os.neutron.getRouter(c.routerId)) !== undefined, 'reads are never fenced');
    assert.ok((await cluster.nodes.list()).items.length >= 1);
    assert.match(await registry.metrics(), /kubeward_operator_fenced_calls_total\{service="neutron",method="PUT"\} 1/);
    assert.match(await registry.metrics(), /kubeward_operator_fenced_calls_total\{service="kubernetes",method="PATCH"\} 1/);
  });
});
