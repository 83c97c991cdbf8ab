// The route writer under the leader's fence: once it falls, no further write goes out, not even the
// plain method's repair of a route another writer's race dropped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NeutronApi } from '../../clients/openstack/openstack-client.ts';
import type { ExtraRoute, Router } from '../../clients/openstack/openstack-types.ts';
import { r } from './cluster-fixtures.test-helpers.ts';
import { RouteWriter } from './route-writer.ts';

const LIVE = r('100.100.1.0/24', '10.0.0.1');
const ORPHAN = r('100.100.2.0/24', '10.0.0.99');
const FOREIGN = r('10.200.0.0/16', '10.0.0.50');

/** A Neutron whose first full-list write races another writer that drops FOREIGN; `onWrite` runs after each write lands. */
function racedNeutron(onWrite: () => void) {
  let routes: ExtraRoute[] = [LIVE, ORPHAN, FOREIGN];
  let revision = 1;
  const writes: ExtraRoute[][] = [];
  const router = (): Router => ({ id: 'r1', name: 'r', project_id: 'p', status: 'ACTIVE', routes, revision_number: revision });
  const neutron = {
    listExtensions: async () => [],
    getRouter: async () => router(),
    updateRoutes: async (_id: string, next: ExtraRoute[], opts: { signal?: AbortSignal } = {}) => {
      writes.push(next);
      opts.signal?.throwIfAborted(); // as the HTTP layer does: an aborted call fails
      routes = writes.length === 1 ? next.filter((x) => x !== FOREIGN) : next;
      revision += writes.length === 1 ? 2 : 1;
      onWrite();
      return router();
    },
  } as unknown as NeutronApi;
  return { neutron, writes };
}

test('plain writes: with the fence up, a route the race dropped is put back (the case below can fail)', async () => {
  const n = racedNeutron(() => undefined);
  const out = await new RouteWriter(n.neutron, { mode: 'plain' }).remove('r1', [ORPHAN], new AbortController().signal);
  assert.deepEqual(out.restored, [FOREIGN]);
  assert.equal(n.writes.length, 2);
});

test('plain writes: a fence that falls during the write stops the repair write', async () => {
  const fence = new AbortController();
  const n = racedNeutron(() => fence.abort(new Error('leadership lost')));
  await assert.rejects(new RouteWriter(n.neutron, { mode: 'plain' }).remove('r1', [ORPHAN], fence.signal), /leadership lost/);
  assert.equal(n.writes.length, 1, 'only the write that was in flight when the fence fell');
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
