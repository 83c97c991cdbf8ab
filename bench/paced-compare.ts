// The paced keep-alive p99 of a few peers from many loads each: `npm run bench` measures one 5 s
// paced load per peer and round, and one run's ratio swings by about ±0.2 (docs/design/p99-measurement.md).
// This starts the peers in interleaved rounds against one backend, measures several paced loads per
// round, and reports each peer's median, its ratio to the first peer named, and how far one bench
// run of that peer against itself can stray (docs/design/worker-accept.md uses it).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { buildShipped } from '../scripts/build.ts';
import { freePorts } from '../testkit/wait-for.ts';
import { measureWrk, pacedScript, runWrk, type LoadSettings } from './measure-perf.ts';
import { parsePeerSpec, seededRandom, summarize, type Load, type PacedPeer, type RatioRange } from './paced-compare-stats.ts';
import { ProcessGroup, daemonStdoutDir } from './process-group.ts';
import { wholeNumber } from './flag-values.ts';
import { startBackend, startProxy, type PeerEnv } from './start-peer.ts';

const HELP = `usage: npm run bench:paced -- --peer SPEC --peer SPEC... [--rounds N] [--loads N] [--duration S] [--kubeward-arg ARG]... [--daemon-stdout DIR]
Paced keep-alive loads (64 connections, 10 ms on average between a connection's requests, as in
npm run bench) against each peer, peers interleaved, a fresh proxy every round. The first --peer is
the reference of the ratios. SPEC: kubeward, kubeward-2, nginx or nginx-2 (one process or
worker, or two); nginx-2:reuseport (a listening socket per worker, the kernel's spread of
connections, as kubeward's); kubeward-2@/abs/checkout/bin/kubeward.js (another build, already built).
  --rounds N (default 4)   --loads N paced loads per peer and round (default 3)   --duration S per load (default 5)
The "one run vs itself" column: the peer's own loads resampled into pairs of bench runs (the median of
3 loads each), the 5-95 % range of their p99 ratio and how often it is at most 1.2x: how often one
run would pass a 1.2x p99 target against a peer exactly like itself. "One run vs" the first peer:
the same for a run of this peer against a run of the first, each drawn from its own loads.
--daemon-stdout DIR keeps every started process's standard output in DIR (NAME.N.out), as npm run bench's.`;

const { values: opt } = parseArgs({
  options: {
    peer: { type: 'string', multiple: true, default: [] },
    rounds: { type: 'string', default: '4' },
    loads: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    'kubeward-arg': { type: 'string', multiple: true, default: [] },
    'daemon-stdout': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (opt.help) {
  process.stdout.write(`${HELP}\n`);
  process.exit(0);
}

function fail(text: string): never {
  process.stderr.write(`bench:paced: ${text}\n`);
  process.exit(2);
}

function count(name: string, text: string, max: number): number {
  return wholeNumber(text, 1, max) ?? fail(`--${name} ${JSON.stringify(text)}: expected a whole number from 1 to ${max}`);
}

let peers: PacedPeer[];
try {
  peers = opt.peer.map(parsePeerSpec);
} catch (err) {
  fail((err as Error).message);
}
if (peers.length < 2) fail('name at least two --peer (the first is the reference)');
if (new Set(opt.peer).size !== opt.peer.length) fail('each --peer once');
const rounds = count('rounds', opt.rounds, 50);
const loadsPerRound = count('loads', opt.loads, 20);
const durationS = count('duration', opt.duration, 120);

const repo = resolve(dirname(new URL(import.meta.url).pathname), '..');
const stdoutDir = opt['daemon-stdout'] === undefined ? undefined : daemonStdoutDir(opt['daemon-stdout']);
if (stdoutDir && 'why' in stdoutDir) fail(`--daemon-stdout ${JSON.stringify(opt['daemon-stdout'])}: ${stdoutDir.why}`);
const group = new ProcessGroup(undefined, { stdoutDir: stdoutDir?.dir });
const dir = await mkdtemp(join(tmpdir(), 'kw-paced-'));
process.once('SIGINT', () => void group.stopAll().finally(() => process.exit(130)));

const say = (text: string): void => void process.stderr.write(`[paced ${new Date().toISOString().slice(11, 19)}] ${text}\n`);

try {
  if (peers.some((p) => p.kind.startsWith('kubeward') && p.main === undefined)) {
    const native = await buildShipped();
    if (!native.ok) say(`the native relay was not built (${native.why})`);
  }
  const [port] = (await freePorts(1)) as [number];
  const base: PeerEnv = { group, dir, kubewardMain: join(repo, 'bin/kubeward.js'), nodeBin: process.execPath, kubewardExtraArgs: opt['kubeward-arg'] };
  await startBackend(base, { port, name: 'paced', readyzDownFlag: join(dir, 'never') });
  const paced: LoadSettings = { durationS, connections: 64, threads: 2, script: join(dir, 'paced.lua') };
  await writeFile(paced.script!, pacedScript(10));
  const loads: Load[] = [];
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? peers : [...peers].reverse();
    for (const peer of order) {
      const env: PeerEnv = { ...base, kubewardMain: peer.main ?? base.kubewardMain, nginxListenParams: peer.reuseport ? ['reuseport'] : [] };
      const proxy = await startProxy(env, peer.kind, { upstreamPorts: [port], tlsUpstreams: false }, `${round}-${order.indexOf(peer)}`);
      try {
        const url = `http://127.0.0.1:${proxy.port}/`;
        await runWrk(url, { durationS: 2, connections: 64, threads: 2 }); // warm-up, as the bench's
        for (let i = 0; i < loadsPerRound; i++) {
          const m = await measureWrk(url, proxy.process.pid, paced);
          const load: Load = {
            label: peer.label,
            p50Ms: m.wrk.p50Ms,
            p99Ms: m.wrk.p99Ms,
            ...(m.cpuUsPerRequest === undefined ? {} : { cpuUsPerRequest: m.cpuUsPerRequest }),
          };
          loads.push(load);
          say(
            `round ${round} ${peer.label}: p50 ${load.p50Ms.toFixed(3)} ms, p99 ${load.p99Ms.toFixed(3)} ms, CPU ${load.cpuUsPerRequest?.toFixed(1) ?? '-'} µs/request, steal ${m.stealPct?.toFixed(1) ?? '-'} %`,
          );
        }
      } finally {
        await group.stop(proxy.process);
      }
    }
  }
  const summary = summarize(
    peers.map((p) => p.label),
    loads,
    peers[0]!.label,
    { runLoads: 3, limit: 1.2, draws: 20_000, rng: seededRandom(1) },
  );
  const range = (r: RatioRange | undefined): string => (r ? `${r.p5.toFixed(2)}-${r.p95.toFixed(2)}x, ${r.passPct.toFixed(0)} % at most 1.2x` : '-');
  const rows = summary.map((s) =>
    [
      s.label,
      String(s.loads),
      s.p50Ms.toFixed(3),
      s.p99Ms.toFixed(3),
      s.p99Ratio === undefined ? '-' : `${s.p99Ratio.toFixed(2)}x`,
      s.cpuUsPerRequest?.toFixed(1) ?? '-',
      range(s.selfRatio),
      range(s.vsReference),
    ].join(' | '),
  );
  process.stdout.write(
    `| peer | loads | p50 (ms) | p99 (ms) | p99 / ${peers[0]!.label} | CPU per request (µs) | one run vs itself | one run vs ${peers[0]!.label} |\n| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |\n${rows.map((r) => `| ${r} |`).join('\n')}\n`,
  );
} finally {
  await group.stopAll();
  await rm(dir, { recursive: true, force: true });
}
