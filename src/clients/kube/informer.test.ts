import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import assert from 'node:assert/strict';
import { ManualClock } from '../../base/clock.ts';
import { createSilentLogger } from '../../base/logger.ts';
import { waitFor } from '../../../testkit/wait-for.ts';
import { Informer, type InformerSource } from './informer.ts';
import { KubeApiError } from './kube-api-error.ts';
import type { KubeList, KubeObject, WatchEvent } from './kube-types.ts';

/** Lets the informer's promise chains run to their next wait (the scripted source waits on nothing else). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

const obj = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });

/** A source whose list results and watch behaviours are scripted call by call. */
function scripted(lists: KubeObject[][], watches: ((emit: (e: WatchEvent<KubeObject>) => void, signal: AbortSignal) => Promise<void>)[]) {
  const calls: string[] = [];
  const src: InformerSource<KubeObject> = {
    list: async () => {
      calls.push('list');
      const items = lists.shift();
      if (!items) throw new KubeApiError({ method: 'GET', path: '/x', status: 503, message: 'down' });
      return { metadata: { resourceVersion: String(calls.length) }, items } satisfies KubeList<KubeObject>;
    },
    watch: async (rv, onEvent, signal) => {
      calls.push(`watch@${rv}`);
      const w = watches.shift();
      if (w) return w(onEvent, signal);
      // No more scripted watches: stay open until stopped.
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
  return { src, calls };
}

test('an informer lists, applies watch events and re-lists after a watch failure, reporting deletions it missed', async (t) => {
  const clock = new ManualClock(0);
  const { src, calls } = scripted(
    [[obj('a', '1'), obj('b', '1')], [obj('a', '3')]],
    [
      async (emit) => {
        emit({ type: 'MODIFIED', object: obj('a', '2') });
        emit({ type: 'ADDED', object: obj('c', '2') });
        throw new KubeApiError({ method: 'WATCH', path: '/x', message: 'connection reset' });
      },
    ],
  );
  const seen: string[] = [];
  const inf = new Informer({ name: 't', source: src, clock, log: createSilentLogger() });
  inf.on('add', (o) => seen.push(`add ${o.metadata.name}`)).on('update', (o) => seen.push(`update ${o.metadata.name}`));
  inf.on('delete', (o) => seen.push(`delete ${o.metadata.name}`));
  inf.start();
  t.after(() => inf.close());
  await inf.waitForSync();
  await waitFor(() => inf.status().restarts === 1, { what: 'the watch failure' });
  clock.advance(500); // the first backoff
  await waitFor(() => calls.filter((c) => c === 'list').length === 2, { what: 'the re-list' });
  await waitFor(() => seen.includes('delete b'), { what: 'deletions found by the re-list' });
  assert.deepEqual(seen, ['add a', 'add b', 'update a', 'add c', 'update a', 'delete b', 'delete c']);
  assert.deepEqual(
    inf.list().map((o) => o.metadata.name),
    ['a'],
  );
});

test('410 Gone re-lists at once without a backoff, and list failures back off exponentially', async (t) => {
  const clock = new ManualClock(0);
  const { src, calls } = scripted(
    [[obj('a', '1')]],
    [
      async () => {
        throw new KubeApiError({ method: 'WATCH', path: '/x', status: 410, reason: 'Expired', message: 'too old' });
      },
    ],
  );
  const inf = new Informer({ name: 't', source: src, clock, log: createSilentLogger(), initialBackoffMs: 100 });
  inf.start();
  t.after(() => inf.close());
  // list ok → watch 410 → list (fails: script exhausted) → sleep 100 → list fails → sleep 200 ...
  await waitFor(() => calls.filter((c) => c === 'list').length === 2, { what: 'the immediate re-list after 410' });
  clock.advance(99);
  await settle();
  assert.equal(calls.filter((c) => c === 'list').length, 2, 'no retry before the backoff ends');
  clock.advance(1);
  await waitFor(() => calls.filter((c) => c === 'list').length === 3, { what: 'retry after 100 ms' });
  clock.advance(199);
  await settle();
  assert.equal(calls.filter((c) => c === 'list').length, 3, 'the second backoff is twice as long');
  clock.advance(1);
  await waitFor(() => calls.filter((c) => c === 'list').length === 4, { what: 'retry after 200 ms' });
  assert.equal(inf.hasSynced(), true, 'a later failure does not unsync the cache');
});

test('close() is idempotent: a second caller joins the first close', async () => {
  const clock = new ManualClock(0);
  const { src, calls } = scripted([[obj('a', '1')]], []);
  const inf = new Informer({ name: 't', source: src, clock, log: createSilentLogger() });
  inf.start();
  await inf.waitForSync();
  await waitFor(() => calls.includes('watch@1'), { what: 'the watch' });
  const first = inf.close();
  assert.equal(inf.close(), first);
  await first;
});

test('a transform decides what the cache keeps, from the list and from watch events alike', async (t) => {
  const secret = (name: string, rv: string) => ({ ...obj(name, rv), data: { key: 'c2VjcmV0' } }) as KubeObject;
  const { src } = scripted(
    [[secret('a', '1')]],
    [
      async (emit, signal) => {
        emit({ type: 'MODIFIED', object: secret('a', '2') });
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      },
    ],
  );
  const inf = new Informer({
    name: 't',
    source: src,
    clock: new ManualClock(0),
    log: createSilentLogger(),
    transform: (o) => ({ metadata: { name: o.metadata.name, namespace: o.metadata.namespace, resourceVersion: o.metadata.resourceVersion } }),
  });
  inf.start();
  t.after(() => inf.close());
  await waitFor(() => inf.get('ns/a')?.metadata.resourceVersion === '2', { what: 'the watch event' });
  assert.equal(inf.size, 1);
  assert.equal('data' in inf.get('ns/a')!, false, 'nothing but metadata is kept');
});

test('the list as received is garbage once the cache holds its transformed objects, while the watch runs', async (t) => {
  // Held in the list-and-watch loop's frame, the list (every object before the transform, with
  // managedFields) stayed alive for as long as the watch that followed it.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const refs: WeakRef<object>[] = [];
  const src: InformerSource<KubeObject> = {
    list: async () => {
      const items = [{ ...obj('a', '1'), spec: { big: 'x'.repeat(1000) } } as KubeObject];
      const list = { metadata: { resourceVersion: '1' }, items };
      refs.push(new WeakRef(list), new WeakRef(items[0]!));
      return list;
    },
    watch: (_rv, _onEvent, signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
  };
  const inf = new Informer({ name: 't', source: src, clock: new ManualClock(0), log: createSilentLogger(), transform: (o) => ({ metadata: o.metadata }) });
  inf.start();
  t.after(() => inf.close());
  await inf.waitForSync();
  await settle();
  gc();
  await settle();
  gc();
  assert.equal(inf.get('ns/a')?.metadata.resourceVersion, '1');
  assert.deepEqual(
    refs.map((r) => r.deref() === undefined),
    [true, true],
    'the list and its untransformed item are collected',
  );
});
