import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideRouteTermination, type RouteTerminationInput } from './decide-route-termination.ts';

const H = 3_600_000;
const base: RouteTerminationInput = {
  outcome: 'done',
  dryRun: false,
  routerId: 'r1',
  left: ['100.100.1.0/24 via 10.0.0.5'],
  alreadyWaiting: false,
  nowMs: 10 * 60_000,
  deletionStartedMs: 0,
  hangTimeoutMs: 24 * H,
  pollMs: 15_000,
};

test("when deorbit may finish as far as the cluster's routes are concerned", () => {
  const cases: [string, Partial<RouteTerminationInput>, boolean, string[]][] = [
    ['no route of the cluster left: finish, with a success event', { left: [] }, true, ['SuccessfulDeorbitRoutes']],
    ['routes left: wait, and say so once', {}, false, ['WaitingForDeorbitRoutes']],
    ['routes still left on a later pass: wait quietly', { alreadyWaiting: true }, false, []],
    [
      'router unreadable: wait (an OpenStack outage is no reason to leave routes behind)',
      { left: undefined, error: 'HTTP 503' },
      false,
      ['WaitingForDeorbitRoutes'],
    ],
    ['routes left at the hang timeout: give up, with a warning naming them', { nowMs: 24 * H }, true, ['FailedDeorbitRoutes']],
    ['router unreadable at the hang timeout: give up too', { nowMs: 25 * H, left: undefined, error: 'HTTP 503' }, true, ['FailedDeorbitRoutes']],
    ['deorbit gave up (self-destruct): the routes do not hold the cluster either', { outcome: 'self-destruct' }, true, ['FailedDeorbitRoutes']],
    ['self-destruct with the routes gone: finish cleanly', { outcome: 'self-destruct', left: [] }, true, ['SuccessfulDeorbitRoutes']],
    ['routegc in dry run removes nothing: nothing to wait for', { dryRun: true }, true, []],
  ];
  for (const [name, over, finish, reasons] of cases) {
    const d = decideRouteTermination({ ...base, ...over });
    assert.equal(d.finish, finish, name);
    assert.deepEqual(
      d.events.map((e) => e.reason),
      reasons,
      name,
    );
  }
});

test('a wait polls at the given interval, names the routes in the condition message, and warnings name what is left', () => {
  const d = decideRouteTermination(base);
  assert.equal(d.finish, false);
  if (d.finish) return;
  assert.equal(d.requeueAfterMs, 15_000);
  assert.equal(d.reason, 'WaitingForRoutes');
  assert.match(d.message, /1 \(100\.100\.1\.0\/24 via 10\.0\.0\.5\) left on router r1/);
  const broken = decideRouteTermination({ ...base, left: undefined, error: 'HTTP 503', outcome: 'self-destruct' });
  assert.match(broken.events[0]!.message, /router r1 could not be read: HTTP 503/);
  const late = decideRouteTermination({ ...base, nowMs: 24 * H });
  assert.match(late.events[0]!.message, /24 h after deletion.*100\.100\.1\.0\/24 via 10\.0\.0\.5/);
});
