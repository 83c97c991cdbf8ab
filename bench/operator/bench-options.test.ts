// The operator benchmark's options: defaults pass, each bad value names its flag, and whatever is
// accepted is in range (property).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkBenchOptions, type RawBenchOptions } from './bench-options.ts';

const DEFAULTS: RawBenchOptions = { sizes: '100,500,1000', duration: '150', interval: '30s', out: 'bench/results', concurrency: '16' };

test('the defaults pass; sizes come out distinct and ascending', () => {
  assert.deepEqual(checkBenchOptions(DEFAULTS), { sizes: [100, 500, 1000], durationS: 150, intervalMs: 30_000, out: 'bench/results', concurrency: 16 });
  assert.deepEqual((checkBenchOptions({ ...DEFAULTS, sizes: '100, 10,100' }) as { sizes: number[] }).sizes, [10, 100]);
});

test('each bad value is refused with its flag named', () => {
  const cases: [Partial<RawBenchOptions>, string][] = [
    [{ sizes: '' }, '--sizes'],
    [{ sizes: '10,,20' }, '--sizes'],
    [{ sizes: '0' }, '--sizes'],
    [{ sizes: '5001' }, '--sizes'],
    [{ sizes: '1e2' }, '--sizes'],
    [{ sizes: '-5' }, '--sizes'],
    [{ duration: '19' }, '--duration'],
    [{ duration: '1801' }, '--duration'],
    [{ duration: '60s' }, '--duration'],
    [{ interval: '500ms' }, '--interval'],
    [{ interval: 'soon' }, '--interval'],
    [{ interval: '2h' }, '--interval'],
    [{ concurrency: '0' }, '--concurrency'],
    [{ concurrency: '65' }, '--concurrency'],
    [{ out: '' }, '--out'],
    [{ out: 'a\0b' }, '--out'],
  ];
  for (const [over, flag] of cases) {
    const r = checkBenchOptions({ ...DEFAULTS, ...over });
    assert.ok('error' in r, JSON.stringify(over));
    assert.ok(r.error.startsWith(flag), r.error);
    assert.ok(!r.error.includes('\n'), 'one line');
  }
});

test('whatever sizes are accepted are whole numbers from 1 to 5000, sorted and distinct (property)', () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.integer({ min: -10, max: 6000 }).map(String), fc.string({ maxLength: 5 })), { minLength: 1, maxLength: 6 }), (parts) => {
      const r = checkBenchOptions({ ...DEFAULTS, sizes: parts.join(',') });
      if ('error' in r) return;
      assert.ok(r.sizes.every((n) => Number.isInteger(n) && n >= 1 && n <= 5000));
      assert.deepEqual(
        r.sizes,
        [...new Set(r.sizes)].sort((a, b) => a - b),
      );
    }),
  );
});
