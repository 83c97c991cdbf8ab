import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pickProcess } from './pick-process.ts';

test('the primary keeps a connection on a tie and hands it to the least loaded worker otherwise', () => {
  assert.equal(pickProcess(0, []), -1);
  assert.equal(pickProcess(3, [3]), -1);
  assert.equal(pickProcess(4, [3]), 0);
  assert.equal(pickProcess(5, [4, 2, 2]), 1, 'the first of the least loaded workers');
});

test('connections opened one after another end up within one of each other in every process', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 300 }), (workers, conns) => {
      const open = new Array<number>(workers + 1).fill(0);
      for (let i = 0; i < conns; i++) {
        const w = pickProcess(open[0]!, open.slice(1));
        open[w + 1]!++;
      }
      assert.ok(Math.max(...open) - Math.min(...open) <= 1, `spread ${open.join('/')}`);
      assert.equal(
        open.reduce((a, b) => a + b, 0),
        conns,
      );
    }),
  );
});

test('the chosen process always has the fewest open connections', () => {
  fc.assert(
    fc.property(fc.nat(1000), fc.array(fc.nat(1000), { maxLength: 8 }), (primary, workers) => {
      const i = pickProcess(primary, workers);
      const chosen = i < 0 ? primary : workers[i]!;
      assert.equal(chosen, Math.min(primary, ...workers));
      if (i >= 0) assert.ok(workers[i]! < primary, 'a worker only when it has strictly fewer than the primary');
    }),
  );
});
