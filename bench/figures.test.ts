import { test } from 'node:test';
import assert from 'node:assert/strict';
import { footprintFigures, renderFigures } from './figures.ts';

test('each figure passes at its target, fails above it, and is "not measured" without data', () => {
  const figures = footprintFigures(
    {
      restRssMB: { kubeward: 60 },
      restAnonMB: { kubeward: 16.1 },
      idleKBPerConn: { kubeward: 3.9 },
      kaCpuUsPerReq: { kubeward: 12, nginx: 10, 'kubeward-2': 13, 'nginx-2': 10 },
      kaP99Ms: { kubeward: 1.2, nginx: 1 },
      kpP99Ms: { kubeward: 1.3, nginx: 1 },
    },
    [{ mode: 'watch', rssMB: 50, anonMB: 12, pssMB: 40 }],
  );
  const by = (name: string) => figures.find((f) => f.figure === name)!;
  assert.equal(by('1. proxy at rest (one process)').pass, false, 'private 16.1 > 16');
  assert.equal(by('2. proxy, 5,000 idle connections').pass, true);
  assert.equal(by('3. watch at rest').pass, true);
  assert.equal(by('3. routes at rest').pass, undefined);
  assert.equal(by('5. CPU per keep-alive request, 1 process vs nginx 1 worker').pass, true, '1.20x is within 1.2x');
  assert.equal(by('5. CPU per keep-alive request, --workers 2 vs nginx 2 workers').pass, false);
  assert.equal(by('5. keep-alive p99 latency at saturation, 1 process vs nginx 1 worker').pass, true);
  assert.equal(by('5. keep-alive p99 latency at saturation, --workers 2 vs nginx 2 workers').pass, undefined);
  assert.equal(by('5. keep-alive p99 latency, paced (about 6,000 requests/s), 1 process vs nginx 1 worker').pass, false, '1.30x > 1.2x');
  const table = renderFigures(figures).split('\n');
  assert.equal(table[2], '| 1. proxy at rest (one process) | RSS ≤ 60 MiB, private ≤ 16 MiB | RSS 60.0 MiB, private 16.1 MiB | FAIL |');
  assert.ok(table.some((l) => l.endsWith('| not measured |')));
});
