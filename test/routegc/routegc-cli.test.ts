// Black-box process tests of `kubeward routegc --once` (and --dry-run) on the OpenStack emulator and a
// real kube-apiserver: the emulator's request log shows that a refused or dry run sends nothing that
// changes the router, and that the real run removes exactly what the dry run said it would.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { kubeApiserverMissing } from '../../testkit/kube/kube-test-server.ts';
import { openCliCloud, type CliCloud } from './cli-cloud-fixture.ts';
import { setNodes } from './kube-cluster-fixture.ts';

const missing = kubeApiserverMissing();

describe('kubeward routegc --once as a process', { skip: missing }, () => {
  let c: CliCloud;
  before(async () => {
    c = await openCliCloud();
  });
  after(async () => {
    await c?.close();
  });
  const base = () => ['--router', c.routerId, '--cluster-cidr', '100.100.0.0/16', '--cluster-name', 'k1', '--once', '--confirm-after', '10s'];
  const routerWrites = () => c.writes().filter((r) => r.service === 'network' && r.path.includes('/routers/'));

  test('bad scope is bad usage: --confirm-after 0, a /0 or too wide --cluster-cidr, a pool name with "-" (exit 2, one line)', async () => {
    const cases: [string[], RegExp][] = [
      [['--confirm-after', '0s'], /confirm-after.*too short/i],
      [['--cluster-cidr', '0.0.0.0/0'], /cluster-cidr.*whole address space/],
      [['--cluster-cidr', '10.0.0.0/4'], /cluster-cidr.*wider than \/8/],
      [['--pool', 'small-x'], /--pool.*collide/],
      [['--instance-prefix', 'kks-k1'], /must end with the "-"/],
    ];
    c.emu.requests = [];
    for (const [extra, want] of cases) {
      const r = await c.run('routegc', [...base(), ...extra]);
      assert.equal(r.code, 2, `${extra.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, want);
    }
    assert.deepEqual(routerWrites(), []);
  });

  test('a --cluster-cidr far wider than the Nodes’ pod CIDRs exits 2 naming the flag and --force-cluster-cidr; forced, the live neighbour route stays', async () => {
    const ours = await c.server('kks-k1-small-ccccc');
    const neighbour = await c.server('kks-k2-small-ddddd');
    await setNodes(c.api, [{ name: 'n1', ip: ours.ip, podCIDR: '10.1.1.0/24', instanceId: ours.id }]);
    await c.os.neutron.updateRoutes(c.routerId, [
      { destination: '10.1.1.0/24', nexthop: ours.ip },
      { destination: '10.2.1.0/24', nexthop: neighbour.ip },
    ]);
    c.emu.requests = [];
    const wide = ['--router', c.routerId, '--cluster-cidr', '10.0.0.0/8', '--cluster-name', 'k1', '--once', '--confirm-after', '10s'];
    const refused = await c.run('routegc', wide);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /--cluster-cidr: 10\.0\.0\.0\/8 is 16 bits wider than 10\.1\.1\.0\/24.*--force-cluster-cidr/);
    const lines = refused.stderr.split('\n').filter((l) => l.startsWith('kubeward routegc:'));
    assert.equal(lines.length, 1, 'one line says why and what to do (the others are the log)');
    const forced = await c.run('routegc', [...wide, '--force-cluster-cidr']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.deepEqual(routerWrites(), [], "the neighbour's route to its live server is no orphan: nothing written");
  });

  test('harm 4: an empty Node list and no --pool/--instance-prefix is refused with the reason (exit 1), nothing written', async () => {
    await setNodes(c.api, []);
    const live = await c.server('kks-k1-small-aaaaa');
    await c.os.neutron.updateRoutes(c.routerId, [
      { destination: '100.100.1.0/24', nexthop: live.ip },
      { destination: '100.100.2.0/24', nexthop: '10.0.0.99' },
    ]);
    c.emu.requests = [];
    for (const dry of [[], ['--dry-run']]) {
      const r = await c.run('routegc', [...base(), ...dry]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stdout, /refused \(NodeListEmpty\)/);
    }
    assert.deepEqual(routerWrites(), []);
  });

  test('--dry-run says what it would remove and writes nothing; the real run then removes exactly that', async () => {
    const live = await c.server('kks-k1-small-bbbbb');
    await setNodes(c.api, [{ name: 'n1', ip: live.ip, podCIDR: '100.100.1.0/24', instanceId: live.id }]);
    await c.os.neutron.updateRoutes(c.routerId, [
      { destination: '100.100.1.0/24', nexthop: live.ip },
      { destination: '100.100.2.0/24', nexthop: '10.0.0.99' },
    ]);
    c.emu.requests = [];
    const dry = await c.run('routegc', [...base(), '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.deepEqual(routerWrites(), [], 'a dry run changes nothing');
    const would = /look 2: .*would remove: ([^;]*);/.exec(dry.stdout)?.[1];
    assert.equal(would, '100.100.2.0/24 via 10.0.0.99 (orphaned)');
    const real = await c.run('routegc', base());
    assert.equal(real.code, 0, real.stderr);
    assert.equal(/look 2: .*removed: ([^;]*);/.exec(real.stdout)?.[1], would, 'the same decision');
    assert.deepEqual(
      (await c.os.neutron.getRouter(c.routerId))!.routes.map((r) => r.destination),
      ['100.100.1.0/24'],
    );
  });
});
