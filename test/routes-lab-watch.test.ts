// End to end in network namespaces: kubeward watch probes m1's apiserver stand-in and writes the
// state files; kubeward routes on m1 turns them into rules (scenario 12). A failing /readyz, a
// SIGTERM of the watcher and a killed watcher (stale heartbeat) each move m1's VIP traffic to the LB.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { watch } from 'node:fs';
import { waitFor } from '../testkit/wait-for.ts';
import { kubewardArgv } from '../testkit/kubeward-process.ts';
import { labSkipReason, stopChild } from './lab/lab-net.ts';
import { noteTierSkip } from '../testkit/test-tiers.ts';
import { VIP4 } from './lab/cloud-lab.ts';
import { standinLab, whoServes } from './lab/apiserver-standin-process.ts';
import { RoutesProcess } from './lab/routes-process.ts';

const skip = (await labSkipReason()) ?? false;
noteTierSkip('root', skip);

test('[S12] end to end with kubeward watch: a failing /readyz, a SIGTERM and a killed watcher each move the node to the LB', { skip }, async (t) => {
  const { lab, ca, api1, dir } = await standinLab(t);
  const m1 = lab.master('m1');

  const watchArgs = ['watch', '--vip', VIP4, '--state-dir', dir, '--ca-file', ca.certFile, '--interval', '200ms', '--timeout', '500ms'];
  const startWatch = () => {
    const w = lab.net.spawn('m1', [...kubewardArgv(watchArgs), '--fall', '2', '--heartbeat', '500ms', '--admin-address', 'off']);
    w.stdout!.resume();
    w.stderr!.resume();
    return w;
  };
  let watcher = startWatch();
  t.after(() => stopChild(watcher, 'SIGKILL', 1000).then(() => undefined));
  const routes = await RoutesProcess.start(lab.net, 'm1', m1.agent, ['--provider', 'azure', '--state-dir', dir, '--stale-after', '3s']);
  t.after(() => routes.stop().then(() => undefined));
  await waitFor(async () => (await whoServes(m1.agent)) === 'm1', { timeoutMs: 15_000, intervalMs: 100, what: 'watch says up, routes redirects' });

  let started = performance.now();
  api1.command('readyz fail');
  await waitFor(async () => (await whoServes(m1.agent)) === 'm2', { timeoutMs: 10_000, intervalMs: 50, what: 'traffic to the LB after /readyz fails' });
  t.diagnostic(`readyz failing → m1's VIP traffic on m2 after ${(performance.now() - started).toFixed(0)} ms (interval 200ms, fall 2)`);
  // The watcher writes .down before it removes .up, so the reader may briefly see both (also down).
  await waitFor(async () => JSON.stringify((await routes.status())!.vips.map((v) => [v.file, v.up])) === JSON.stringify([['down', false]]), {
    timeoutMs: 5000,
    what: 'routes status: file down, VIP not up',
  });

  api1.command('readyz ok');
  await waitFor(async () => (await whoServes(m1.agent)) === 'm1', { timeoutMs: 10_000, intervalMs: 50, what: 'back to local after recovery' });

  started = performance.now();
  assert.equal(await stopChild(watcher, 'SIGTERM', 5000), 0);
  await waitFor(async () => (await whoServes(m1.agent)) === 'm2', { timeoutMs: 5000, intervalMs: 50, what: 'traffic to the LB after the watcher got SIGTERM' });
  t.diagnostic(`watcher SIGTERM → m1's VIP traffic on m2 after ${(performance.now() - started).toFixed(0)} ms`);

  watcher = startWatch();
  await waitFor(async () => (await whoServes(m1.agent)) === 'm1', { timeoutMs: 15_000, intervalMs: 100, what: 'up again with a new watcher' });
  started = performance.now();
  await stopChild(watcher, 'SIGKILL', 1000); // no chance to write .down: only the heartbeat ages
  await waitFor(async () => (await whoServes(m1.agent)) === 'm2', { timeoutMs: 8000, intervalMs: 100, what: 'stale heartbeat withdraws the redirect' });
  const staleMs = performance.now() - started;
  t.diagnostic(`watcher SIGKILL → m1's VIP traffic on m2 after ${staleMs.toFixed(0)} ms (--stale-after 3s, heartbeat 500ms)`);
  assert.ok(staleMs > 2000, 'not before the heartbeat is stale');
  assert.match((await routes.status())!.vips[0]!.reason, /stale/);
});

test('[interop] heartbeats never touch the state directory, and kubeward routes stays up on them past --stale-after', { skip }, async (t) => {
  const { lab, ca, dir } = await standinLab(t);
  const m1 = lab.master('m1');
  const watcher = lab.net.spawn(
    'm1',
    kubewardArgv([
      'watch',
      '--vip',
      VIP4,
      '--state-dir',
      dir,
      '--ca-file',
      ca.certFile,
      '--interval',
      '200ms',
      '--timeout',
      '500ms',
      '--heartbeat',
      '200ms',
      '--admin-address',
      'off',
    ]),
  );
  watcher.stdout!.resume();
  watcher.stderr!.resume();
  t.after(() => stopChild(watcher, 'SIGKILL', 1000).then(() => undefined));
  const routes = await RoutesProcess.start(lab.net, 'm1', m1.agent, ['--provider', 'azure', '--state-dir', dir, '--stale-after', '1s']);
  t.after(() => routes.stop().then(() => undefined));
  await waitFor(async () => (await whoServes(m1.agent)) === 'm1', { timeoutMs: 15_000, intervalMs: 100, what: 'up' });

  // What OpenShift's consumers see: gcp-routes.sh waits with `inotifywait -r` on the directory and
  // the Azure path unit fires on any change in it. Count every inotify event during 15 heartbeats
  // (about 3 s), counted in the beat file rather than timed, so a slow machine only makes it longer.
  let events = 0;
  const w = watch(dir, { recursive: false }, () => events++);
  t.after(() => w.close());
  const beatsSeen = new Set<string>();
  const served: string[] = [];
  await waitFor(
    async () => {
      served.push(await whoServes(m1.agent));
      beatsSeen.add(await readFile(`${dir}-heartbeat/${VIP4}.beat`, 'utf8').catch(() => ''));
      beatsSeen.delete('');
      return beatsSeen.size >= 15;
    },
    { timeoutMs: 20_000, intervalMs: 50, what: '15 heartbeats' },
  );
  assert.deepEqual(
    served.filter((who) => who !== 'm1'),
    [],
    'still up on heartbeats alone (--stale-after 1s < 3 s since the verdict)',
  );
  w.close();
  const beats = await readdir(`${dir}-heartbeat`);
  t.diagnostic(`${events} inotify events in the state directory during ${beatsSeen.size} heartbeats (200 ms apart); heartbeat dir holds ${beats.join(', ')}`);
  assert.equal(events, 0, 'the state directory saw no event');
  assert.deepEqual(beats, [`${VIP4}.beat`]);
  const v = (await routes.status())!.vips[0]!;
  assert.ok(v.up && (v.heartbeatAgeMs ?? Infinity) < 1000, `fresh heartbeat read from the beat file (${v.heartbeatAgeMs} ms)`);
});
