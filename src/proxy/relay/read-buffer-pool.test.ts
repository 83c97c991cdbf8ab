import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReadBufferPool } from './read-buffer-pool.ts';

test('slices are the configured size, never overlap, and a slab is cut only when the free ones run out', () => {
  const pool = new ReadBufferPool({ sliceBytes: 1024, slicesPerSlab: 4 });
  const taken = Array.from({ length: 5 }, () => pool.take());
  assert.ok(taken.every((b) => b.length === 1024));
  taken.forEach((b, i) => b.fill(i));
  taken.forEach((b, i) =>
    assert.ok(
      b.every((x) => x === i),
      `slice ${i} was overwritten by another`,
    ),
  );
  assert.deepEqual(pool.stats, { slabs: 2, free: 3, inUse: 5 });
});

test('the slice given back last is handed out first (it is the one already in memory)', () => {
  const pool = new ReadBufferPool({ sliceBytes: 512, slicesPerSlab: 8 });
  const a = pool.take();
  const b = pool.take();
  pool.give(a);
  pool.give(b);
  assert.equal(pool.take(), b);
  assert.equal(pool.take(), a);
  assert.equal(pool.stats.slabs, 1);
});
