import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FaultInjector } from './fault-injector.ts';

test('a fault matches on service, method and path pattern, and stops after its count', () => {
  const f = new FaultInjector();
  f.add({ service: 'network', method: 'put', path: '^/routers/[^/]+$', status: 503, times: 2 });
  assert.equal(f.take('compute', 'PUT', '/routers/r1'), undefined, 'other service');
  assert.equal(f.take('network', 'GET', '/routers/r1'), undefined, 'other method');
  assert.equal(f.take('network', 'PUT', '/routers/r1/add_extraroutes'), undefined, 'other path');
  assert.equal(f.take('network', 'PUT', '/routers/r1')?.status, 503);
  assert.equal(f.take('network', 'PUT', '/routers/r1')?.hits, 2);
  assert.equal(f.take('network', 'PUT', '/routers/r1'), undefined, 'used up');
  assert.deepEqual(f.list(), []);
});

test('without a count a fault stays until removed; the first added rule wins', () => {
  const f = new FaultInjector();
  const hang = f.add({ service: 'volume', hang: true });
  f.add({ status: 500 });
  for (let i = 0; i < 3; i++) assert.equal(f.take('volume', 'GET', '/p/volumes')?.hang, true);
  assert.equal(f.take('compute', 'GET', '/servers')?.status, 500);
  assert.equal(f.remove(hang.id), true);
  assert.equal(f.take('volume', 'GET', '/p/volumes')?.status, 500);
  assert.equal(f.remove('fault-99'), false);
});

test('a bad path pattern is refused when the fault is added, not on the next request', () => {
  assert.throws(() => new FaultInjector().add({ path: '(' }), SyntaxError);
});
