import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideDownPeers } from './decide-down-peers.ts';
import type { VipState } from './vip-states.ts';

function vip(v: string, up: boolean): VipState {
  return { vip: v, family: v.includes(':') ? 6 : 4, file: up ? 'up' : 'down', up, reason: 'test' };
}

const T0 = 1_000_000;

test('a down VIP goes to the first healthy peer of its family for the window, counted from the first sync that saw it down', () => {
  const vips = [vip('10.0.0.100', false), vip('2001:db8:100::100', false), vip('10.0.0.101', true)];
  const peers = ['2001:db8:3::13', '10.0.3.13', '10.0.2.12'];
  const first = decideDownPeers({ nowMs: T0, vips, downSince: new Map(), windowMs: 30_000, healthyPeers: peers });
  assert.deepEqual(first.redirects, [
    { vip: '10.0.0.100', family: 4, to: '10.0.3.13' },
    { vip: '2001:db8:100::100', family: 6, to: '2001:db8:3::13' },
  ]);
  assert.equal(first.nextChangeAtMs, T0 + 30_000);
  assert.deepEqual([...first.downSince.keys()], ['10.0.0.100', '2001:db8:100::100'], 'up VIPs have no window');
  const later = decideDownPeers({ nowMs: T0 + 29_999, vips, downSince: first.downSince, windowMs: 30_000, healthyPeers: peers });
  assert.equal(later.redirects.length, 2, 'still inside the window');
  const over = decideDownPeers({ nowMs: T0 + 30_000, vips, downSince: later.downSince, windowMs: 30_000, healthyPeers: peers });
  assert.deepEqual(over.redirects, [], 'window over: the load balancer path again');
  assert.equal(over.nextChangeAtMs, undefined);
  assert.equal(over.downSince.get('10.0.0.100'), T0, 'the start is kept while the VIP stays down');
});

test('up again ends the window; the next down starts a new one', () => {
  const down = decideDownPeers({ nowMs: T0, vips: [vip('10.0.0.100', false)], downSince: new Map(), windowMs: 1000, healthyPeers: ['10.0.2.12'] });
  const up = decideDownPeers({ nowMs: T0 + 500, vips: [vip('10.0.0.100', true)], downSince: down.downSince, windowMs: 1000, healthyPeers: ['10.0.2.12'] });
  assert.deepEqual(up.redirects, []);
  assert.equal(up.downSince.size, 0);
  const again = decideDownPeers({ nowMs: T0 + 5000, vips: [vip('10.0.0.100', false)], downSince: up.downSince, windowMs: 1000, healthyPeers: ['10.0.2.12'] });
  assert.deepEqual(again.redirects, [{ vip: '10.0.0.100', family: 4, to: '10.0.2.12' }]);
});

test('no healthy peer, or only unusable ones (a managed VIP, loopback, the other family): no redirect, and why', () => {
  const vips = [vip('10.0.0.100', false), vip('10.0.0.101', true)];
  const d = decideDownPeers({
    nowMs: T0,
    vips,
    downSince: new Map(),
    windowMs: 1000,
    healthyPeers: ['10.0.0.101', '127.0.0.1', '2001:db8:2::12', '010.0.2.12'],
  });
  assert.deepEqual(d.redirects, []);
  assert.deepEqual(
    d.unserved.map((u) => u.vip),
    ['10.0.0.100'],
  );
  assert.match(d.unserved[0]!.reason, /no healthy IPv4 peer/);
});
