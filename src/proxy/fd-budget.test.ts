import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planConnectionCaps, readFdLimit, SPARE_FDS } from './fd-budget.ts';

const base = { fdsInUse: 30, adminConnections: 32 };

test('without --max-connections the fd limit minus the reserve is shared, two fds per connection', () => {
  const caps = planConnectionCaps({
    ...base,
    fdLimit: 1024,
    frontends: [
      { name: 'api', upstreams: 3 },
      { name: 'etcd', upstreams: 3 },
    ],
  });
  const free = 1024 - 30 - 2 * 6 - 32 - SPARE_FDS;
  assert.deepEqual(caps.get('api'), { cap: Math.floor(free / 2 / 2), source: 'fd-limit' });
  assert.deepEqual(caps.get('etcd'), caps.get('api'));
});

test('--max-connections applies when it fits the budget, and the budget wins when it does not', () => {
  const small = planConnectionCaps({ ...base, fdLimit: 1024, frontends: [{ name: 'api', upstreams: 3, maxConnections: 100 }] });
  assert.deepEqual(small.get('api'), { cap: 100, source: 'max-connections' });
  const big = planConnectionCaps({ ...base, fdLimit: 256, frontends: [{ name: 'api', upstreams: 3, maxConnections: 100_000 }] });
  assert.equal(big.get('api')!.source, 'fd-limit');
  assert.ok(big.get('api')!.cap < 100);
});

test('a limit below the reserve still lets one connection through; no limit means no cap', () => {
  assert.equal(planConnectionCaps({ ...base, fdLimit: 10, frontends: [{ name: 'api', upstreams: 1 }] }).get('api')!.cap, 1);
  assert.deepEqual(planConnectionCaps({ ...base, fdLimit: undefined, frontends: [{ name: 'api', upstreams: 1 }] }).get('api')!.source, 'none');
});

test('the fd limit is read from /proc on Linux', (t) => {
  if (process.platform !== 'linux') return t.skip('Linux only');
  const limit = readFdLimit();
  assert.ok(limit === undefined || limit > 0);
});
