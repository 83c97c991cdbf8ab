// The route writer: plain full-list writes never put back a route another writer removed, and under
// the leader's fence no write goes out once it has fallen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NeutronApi } from '../../clients/openstack/openstack-client.ts';
import type { ExtraRoute, Router } from '../../clients/openstack/openstack-types.ts';
import { r } from './cluster-fixtures.test-helpers.ts';
import { RouteWriter } from './route-writer.ts';

const LIVE = r('100.100.1.0/24', '10.0.0.1');
const ORPHAN = r('100.100.2.0/24', '10.0.0.99');
const FOREIGN = r('10.200.0.0/16', '10.0.0.50');

/**
 * A full-list Neutron with a second writer: `between` runs after the n-th router read is answered (it
 * changes the routes as another client's write would); `afterWrite` right after our write lands.
 */
function sharedNeutron(o: { between?: { read: number; change: (rs: ExtraRoute[]) => ExtraRoute[] }; afterWrite?: (rs: ExtraRoute[]) => ExtraRoute[] }) {
  let routes: ExtraRoute[] = [LIVE, ORPHAN, FOREIGN];
  let revision = 1;
  let reads = 0;
  const writes: ExtraRoute[][] = [];
  const router = (): Router => ({ id: 'r1', name: 'r', project_id: 'p', status: 'ACTIVE', routes, revision_number: revision });
  const neutron = {
    listExtensions: async () => [],
    getRouter: async () => {
      const answer = router();
      if (o.between && ++reads === o.between.read) {
        routes = o.between.change(routes);
        revision++;
      }
      return answer;
    },
    updateRoutes: async (_id: string, next: ExtraRoute[], opts: { signal?: AbortSignal } = {}) => {
      opts.signal?.throwIfAborted(); // as the HTTP layer does: an aborted call fails
      writes.push(next);
      routes = next;
      revision++;
      const answer = router();
      if (o.afterWrite) {
        routes = o.afterWrite(routes);
        revision++;
      }
      return answer;
    },
  } as unknown as NeutronApi;
  return { neutron, writes, routes: () => routes };
}

test('plain writes: a route another writer removes between our read and our write is not put back', async () => {
  const n = sharedNeutron({ between: { read: 1, change: (rs) => rs.filter((x) => x !== FOREIGN) } });
  const out = await new RouteWriter(n.neutron, { mode: 'plain' }).remove('r1', [ORPHAN], new AbortController().signal);
  assert.deepEqual(n.routes(), [LIVE], 'the orphan is gone and the removed route stays removed');
  assert.deepEqual(n.writes, [[LIVE]], 'one write, computed from the router as the other writer left it');
  assert.equal(out.conflicts, 1, 'the change under us is counted');
  assert.deepEqual(out.changed, [ORPHAN]);
});

test('plain writes: a route another writer removes right after our write is not put back', async () => {
  const n = sharedNeutron({ afterWrite: (rs) => rs.filter((x) => x !== FOREIGN) });
  const out = await new RouteWriter(n.neutron, { mode: 'plain' }).remove('r1', [ORPHAN], new AbortController().signal);
  assert.deepEqual(n.routes(), [LIVE]);
  assert.equal(n.writes.length, 1, 'no repair write');
  assert.equal(out.raced, false, 'our own write landed on the router we read');
});

test('plain writes: a router that never holds still is given up on, with nothing written', async () => {
  let flips = 0;
  const n = sharedNeutron({ between: { read: 1, change: (rs) => rs } });
  const busy = {
    ...n.neutron,
    getRouter: async () => ({ id: 'r1', name: 'r', project_id: 'p', status: 'ACTIVE', routes: [LIVE, ORPHAN], revision_number: ++flips }),
  } as unknown as NeutronApi;
  await assert.rejects(new RouteWriter(busy, { mode: 'plain', maxAttempts: 3 }).remove('r1', [ORPHAN]), /changed under us 3 times/);
  assert.deepEqual(n.writes, []);
});

test('plain writes: a fence that falls during the confirming read stops the write', async () => {
  const fence = new AbortController();
  const n = sharedNeutron({ between: { read: 2, change: (rs) => (fence.abort(new Error('leadership lost')), rs) } });
  await assert.rejects(new RouteWriter(n.neutron, { mode: 'plain' }).remove('r1', [ORPHAN], fence.signal), /leadership lost/);
  assert.deepEqual(n.writes, []);
});

test('every method sends nothing once the fence is down', async () => {
  for (const mode of ['plain', 'revision', 'atomic'] as const) {
    const fence = new AbortController();
    fence.abort(new Error('leadership lost'));
    const calls: string[] = [];
    const neutron = {
      getRouter: async () => ({ id: 'r1', routes: [LIVE, ORPHAN], revision_number: 1 }),
      updateRoutes: async () => void calls.push('updateRoutes'),
      removeExtraRoutes: async () => void calls.push('removeExtraRoutes'),
    } as unknown as NeutronApi;
    await assert.rejects(new RouteWriter(neutron, { mode }).remove('r1', [ORPHAN], fence.signal), /leadership lost/, mode);
    assert.deepEqual(calls, [], mode);
  }
});
