// The footprint targets as a pass/fail table: the medians of one bench run against each target.
// Pure: medians in, rows out. Memory targets are for one process as shipped (the build).
import { ratio, type Medians } from './bench-stats.ts';
import type { DaemonMode, ModeMemory } from './measure-modes.ts';

export interface Figure {
  figure: string;
  target: string;
  measured: string;
  /** undefined: not measured in this run. */
  pass: boolean | undefined;
}

const mib = (v: number | undefined): string => (v === undefined ? '—' : `${v.toFixed(1)} MiB`);
const x = (v: number | undefined): string => (v === undefined ? '—' : `${v.toFixed(2)}x`);
const within = (v: number | undefined, max: number): boolean | undefined => (v === undefined ? undefined : v <= max);
const both = (a: boolean | undefined, b: boolean | undefined): boolean | undefined => (a === undefined || b === undefined ? undefined : a && b);

export function footprintFigures(m: Medians, modes: readonly ModeMemory[]): Figure[] {
  const out: Figure[] = [];
  const memory = (figure: string, rss: number | undefined, anon: number | undefined, maxRss: number, maxAnon: number): void => {
    out.push({
      figure,
      target: `RSS ≤ ${maxRss} MiB, private ≤ ${maxAnon} MiB`,
      measured: `RSS ${mib(rss)}, private ${mib(anon)}`,
      pass: both(within(rss, maxRss), within(anon, maxAnon)),
    });
  };
  memory('1. proxy at rest (one process)', m.restRssMB?.kubeward, m.restAnonMB?.kubeward, 60, 16);
  const perConn = m.idleKBPerConn?.kubeward;
  out.push({
    figure: '2. proxy, 5,000 idle connections',
    target: '≤ 4 KiB per connection',
    measured: perConn === undefined ? '—' : `${perConn.toFixed(2)} KiB`,
    pass: within(perConn, 4),
  });
  const mode = (name: DaemonMode) => modes.find((d) => d.mode === name);
  memory('3. watch at rest', mode('watch')?.rssMB, mode('watch')?.anonMB, 60, 16);
  memory('3. routes at rest', mode('routes')?.rssMB, mode('routes')?.anonMB, 60, 16);
  memory('4. agent (proxy + watch + routes) at rest', mode('agent')?.rssMB, mode('agent')?.anonMB, 70, 24);
  const pair = (figure: string, key: string, max: number): void => {
    const one = ratio(m[key]?.kubeward, m[key]?.nginx);
    const two = ratio(m[key]?.['kubeward-2'], m[key]?.['nginx-2']);
    out.push({ figure: `${figure}, 1 process vs nginx 1 worker`, target: `≤ ${max.toFixed(1)}x nginx`, measured: x(one), pass: within(one, max) });
    out.push({ figure: `${figure}, --workers 2 vs nginx 2 workers`, target: `≤ ${max.toFixed(1)}x nginx`, measured: x(two), pass: within(two, max) });
  };
  pair('5. CPU per keep-alive request', 'kaCpuUsPerReq', 1.2);
  pair('5. keep-alive p99 latency at saturation', 'kaP99Ms', 1.2);
  pair('5. keep-alive p99 latency, paced (about 6,000 requests/s)', 'kpP99Ms', 1.2);
  pair('6. CPU per new connection', 'ncCpuUsPerConn', 2.0);
  return out;
}

export function renderFigures(figures: readonly Figure[]): string {
  const lines = ['| figure | target | measured (median) | result |', '| --- | --- | ---: | --- |'];
  for (const f of figures) lines.push(`| ${f.figure} | ${f.target} | ${f.measured} | ${f.pass === undefined ? 'not measured' : f.pass ? 'pass' : 'FAIL'} |`);
  return lines.join('\n');
}
