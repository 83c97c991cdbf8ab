// npm run bench -- --soak DURATION [--fault-period D] [--rate-new N] [--rate-keepalive N] [--watches N]
// [--after D] [--out DIR]: the soak (run-soak.ts) against the proxy as shipped (npm run build, then
// bin/kubeward.js). Writes bench/results/soak-<date>.json and .md and prints the tables.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseDuration } from '../../src/base/duration.ts';
import { buildShipped } from '../../scripts/build.ts';
import { renderSoak, runSoak, STANDIN_MAIN } from './run-soak.ts';
import { wholeNumber } from '../flag-values.ts';

const HELP = `usage: npm run bench -- --soak DURATION [--fault-period D] [--rest D] [--after D] [--sample D]
  [--rate-new N] [--rate-keepalive N] [--keepalive-connections N] [--watches N] [--out DIR] [--proxy-log FILE]
Runs the shipped proxy (npm run build, then bin/kubeward.js) for DURATION (e.g. 2m, 1h) in front of
three TLS apiserver stand-ins, under one-shot TLS connections (--rate-new, default 150/s), keep-alive
requests (--rate-keepalive, default 500/s over --keepalive-connections, default 32) and long-lived
watch streams (--watches, default 30). One fault every --fault-period (default 1m) in turn: an
upstream killed (restarted after half a period, at most 10 s), hung (SIGSTOP), drained (a graceful
shutdown as kube-apiserver's: readyz 503 for the same time, then it stops and comes back), the
proxy reloaded (SIGHUP). Reports RSS, private memory and descriptors at rest (--rest, default
30s), at peak, after the load (--after idle, default 60s) and their slope per 10 minutes,
and failed requests by the fault in force, with the first failures' details (client kind, error, when
after the fault's start). --proxy-log writes the proxy's log at info level (rebalancing, upstream
transitions) to FILE.`;

const { values: opt } = parseArgs({
  options: {
    soak: { type: 'string' },
    'fault-period': { type: 'string', default: '1m' },
    rest: { type: 'string', default: '30s' },
    after: { type: 'string', default: '60s' },
    sample: { type: 'string', default: '5s' },
    'rate-new': { type: 'string', default: '150' },
    'rate-keepalive': { type: 'string', default: '500' },
    'keepalive-connections': { type: 'string', default: '32' },
    watches: { type: 'string', default: '30' },
    out: { type: 'string' },
    'proxy-log': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (opt.help || !opt.soak) {
  process.stdout.write(`${HELP}\n`);
  process.exit(opt.help ? 0 : 2);
}

function duration(flag: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) {
    process.stderr.write(`--${flag}: expected a duration like 90s, 2m or 1h, got ${JSON.stringify(text)}\n`);
    process.exit(2);
  }
  return ms;
}
function count(flag: string, text: string, max: number): number {
  const n = wholeNumber(text, 0, max);
  if (n === undefined) {
    process.stderr.write(`--${flag}: expected a whole number from 0 to ${max}, got ${JSON.stringify(text)}\n`);
    process.exit(2);
  }
  return n;
}

const repo = resolve(dirname(new URL(import.meta.url).pathname), '../..');
const settings = {
  durationMs: duration('soak', opt.soak),
  periodMs: duration('fault-period', opt['fault-period']),
  restMs: duration('rest', opt.rest),
  afterMs: duration('after', opt.after),
  sampleMs: duration('sample', opt.sample),
  newConnsPerSec: count('rate-new', opt['rate-new'], 5000),
  keepAlivePerSec: count('rate-keepalive', opt['rate-keepalive'], 20000),
  keepAliveConns: count('keepalive-connections', opt['keepalive-connections'], 1000) || 1,
  watches: count('watches', opt.watches, 1000),
};
process.stdout.write('soak: building the proxy as shipped (npm run build)\n');
await buildShipped();
const report = await runSoak({
  ...settings,
  kubeward: { node: process.execPath, argv: (args) => [join(repo, 'bin/kubeward.js'), ...args] },
  node: process.execPath,
  standinMain: STANDIN_MAIN,
  proxyLogFile: opt['proxy-log'],
  log: (line) => process.stdout.write(`soak: ${line}\n`),
});
const text = renderSoak(report);
const outDir = opt.out ?? join(repo, 'bench/results');
await mkdir(outDir, { recursive: true });
const base = join(outDir, `soak-${new Date().toISOString().slice(0, 10)}`);
await writeFile(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
await writeFile(`${base}.md`, `${text}\n`);
process.stdout.write(`${text}\nsoak: written ${base}.json and .md\n`);
process.exit(report.proxyAlive ? 0 : 1);
